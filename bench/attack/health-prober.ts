/**
 * Asks the service's `/health` every 10 ms, one request at a time on one kept-alive connection,
 * until its parent (health-watch.ts) says stop; then answers the longest time between two
 * replies and the number of probes that failed (it says ready after its first reply). A process
 * of its own, so that an attacker building a 32 MB body or a thousand requests never delays it:
 * any gap over the 10 ms pause and a loopback round trip is the service's event loop stalling.
 * A failed probe (refused, reset, no reply in time) does not end a gap: a service that cannot
 * answer is stalled for as long as that lasts.
 */
import { Agent, get } from 'node:http';

const PAUSE_MS = 10;
/** A probe that has no reply in this long fails, and the gap goes on. */
const PROBE_TIMEOUT_MS = 5_000;

function health(url: string, agent: Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = get(url, { agent, timeout: PROBE_TIMEOUT_MS }, (response) => {
      response.resume();
      response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`${response.statusCode}`))));
      response.on('error', reject);
    });
    probe.on('timeout', () => probe.destroy(new Error('timeout')));
    probe.on('error', reject);
  });
}

interface ProbeFigures {
  worstGap: number;
  /** When the worst gap ended, in Date.now() time, which the attacker's process shares. */
  worstGapEndedAt: number;
  failures: number;
}

async function probe(url: string, stopped: () => boolean): Promise<ProbeFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  await health(url, agent);
  process.send?.({ ready: true });
  let worstGap = 0;
  let worstGapEndedAt = Date.now();
  let failures = 0;
  let lastReply = performance.now();
  while (!stopped()) {
    const answered = await health(url, agent).then(
      () => true,
      () => false,
    );
    const now = performance.now();
    if (now - lastReply > worstGap) {
      worstGap = now - lastReply;
      worstGapEndedAt = Date.now();
    }
    if (answered) lastReply = now;
    else failures += 1;
    await new Promise((done) => setTimeout(done, PAUSE_MS));
  }
  agent.destroy();
  return { worstGap, worstGapEndedAt, failures };
}

const url = process.argv[2];
if (url === undefined || process.send === undefined) throw new Error('usage: forked with the /health URL');
let stop = false;
process.on('message', () => (stop = true));
// The attack ended without asking (interrupted): nothing is left to report to.
process.on('disconnect', () => {
  if (!stop) process.exit(0);
});
const result = await probe(url, () => stop);
process.send(result, () => process.disconnect());
