/**
 * Asks the service's `/health` every 10 ms, one request at a time on one kept-alive connection,
 * until its parent (bench/attack/input-cost.ts) says stop; then answers the longest time between
 * two replies (it says ready after its first). A process of its own, so that the attacker building a 32 MB body never delays it:
 * any gap over the 10 ms pause and a loopback round trip is the service's event loop stalling.
 */
import { Agent, get } from 'node:http';

const PAUSE_MS = 10;

function health(url: string, agent: Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (response) => {
      response.resume();
      response.on('end', resolve);
      response.on('error', reject);
    }).on('error', reject);
  });
}

async function probe(url: string, stopped: () => boolean): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  await health(url, agent);
  process.send?.({ ready: true });
  let worstGap = 0;
  let lastReply = performance.now();
  while (!stopped()) {
    // A refused or reset probe (the service died) still ends a gap: the table says it died.
    await health(url, agent).catch(() => undefined);
    const now = performance.now();
    worstGap = Math.max(worstGap, now - lastReply);
    lastReply = now;
    await new Promise((done) => setTimeout(done, PAUSE_MS));
  }
  agent.destroy();
  return worstGap;
}

const url = process.argv[2];
if (url === undefined || process.send === undefined) throw new Error('usage: forked with the /health URL');
let stop = false;
process.on('message', () => (stop = true));
const worstGap = await probe(url, () => stop);
process.send({ worstGap }, () => process.disconnect());
