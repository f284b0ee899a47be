/**
 * Streaming clients that stop reading, against everyone else on their model (issue 16, case
 * 4). `--readers` raw connections each ask for a stream far larger than a socket buffer (the
 * scripted backend echoes one 8 MB word, 131,072 tokens of 64 letters), then never read. The model admits
 * `--concurrency` requests and queues none; meanwhile a legitimate request is sent every
 * `--interval-ms` for `--seconds`, and each outcome is counted per second.
 *
 * Without a write timeout, the readers hold their slots for as long as they stay, and every
 * other request is a 529. With one, they are cut off after listen.writeTimeoutMs, and the rest
 * are served. A /health prober runs beside it (health-prober.ts). Loopback only; the run ends
 * after --seconds, killing the service.
 *
 *   node --import tsx bench/attack/slow-readers.ts [--checkout ../mms-main]
 *     [--readers 2] [--concurrency 2] [--seconds 12] [--interval-ms 250] [--write-timeout-ms 3000]
 *
 * --write-timeout-ms sets listen.writeTimeoutMs (a checkout from before it refuses the field:
 * leave it out there).
 */
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
    readers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '12' },
    'interval-ms': { type: 'string', default: '250' },
    'write-timeout-ms': { type: 'string' },
  },
});
const settings = {
  readers: positiveInteger(values.readers, 'readers'),
  concurrency: positiveInteger(values.concurrency, 'concurrency'),
  seconds: positiveInteger(values.seconds, 'seconds'),
  intervalMs: positiveInteger(values['interval-ms'], 'interval-ms'),
  writeTimeoutMs:
    values['write-timeout-ms'] === undefined
      ? undefined
      : positiveInteger(values['write-timeout-ms'], 'write-timeout-ms'),
};

const MODEL = 'attacked';
const LONG_WORD = 'x'.repeat(8 * 1024 * 1024);
/** The whole word echoed back, with room to spare. */
const ECHO_TOKENS = 140_000;
/** A legitimate request that gets no answer in this time counts as a timeout. */
const REQUEST_TIMEOUT_MS = 5_000;

const service = await startServiceChild({
  checkout: values.checkout,
  config: {
    ...(settings.writeTimeoutMs === undefined ? {} : { listen: { writeTimeoutMs: settings.writeTimeoutMs } }),
    models: [
      {
        id: MODEL,
        tier: 'mid',
        generation: 'newer',
        // Room for the 8 MB word, in and out: the scripted tokenizer counts a token per 64 letters of it.
        contextWindow: 1_000_000,
        maxOutputTokens: ECHO_TOKENS,
        backend: { type: 'scripted', concurrency: settings.concurrency, queue: 0 },
      },
    ],
  },
});
const readers: Socket[] = [];
const health = await startHealthWatch(service.baseURL);
const attackStartedAt = Date.now();
try {
  const { hostname, port } = new URL(service.baseURL);
  for (let index = 0; index < settings.readers; index += 1) readers.push(await pausedReader(hostname, Number(port)));
  const outcomes: Outcome[] = [];
  const start = Date.now();
  while (Date.now() - start < settings.seconds * 1000) {
    const atMs = Date.now() - start;
    outcomes.push({ atMs, outcome: await legitimateRequest() });
    await new Promise((resolve) => setTimeout(resolve, settings.intervalMs));
  }
  const served = outcomes.filter((entry) => entry.outcome === '200');
  printOutcomeTable(
    `${settings.readers} paused streaming readers vs a request every ${settings.intervalMs} ms on a model with concurrency ${settings.concurrency}, queue 0; listen.writeTimeoutMs ${settings.writeTimeoutMs ?? 'not set'}; ${values.checkout ?? 'this checkout'}`,
    outcomes,
    1_000,
  );
  console.log(
    `\nfirst request served after ${served.length === 0 ? 'never' : `${(served[0]!.atMs / 1000).toFixed(1)} s`}; ${served.length} of ${outcomes.length} served`,
  );
  const { worstGapMs } = await health.stop();
  const peakRssMb = service.peakRssMb();
  const worstLoopDelayMs = service.worstLoopDelay(attackStartedAt).delayMs;
  console.log(
    `worst /health gap ${worstGapMs.toFixed(0)} ms; worst loop delay ${worstLoopDelayMs.toFixed(0)} ms; service peak RSS ${peakRssMb?.toFixed(0) ?? 'n/a'} MB`,
  );
  printSummaryLine('slow-readers', [
    legitimateTrafficRow(
      `slow readers: ${settings.readers} paused, writeTimeoutMs ${settings.writeTimeoutMs ?? 'default'}, ${settings.seconds} s`,
      service,
      outcomes,
      worstGapMs,
      attackStartedAt,
    ),
  ]);
} finally {
  for (const reader of readers) reader.destroy();
  await service.stop();
}

/** A raw connection that asks for the long stream and never reads; resolves once the request is sent. */
async function pausedReader(host: string, port: number): Promise<Socket> {
  const body = JSON.stringify({
    model: MODEL,
    max_tokens: ECHO_TOKENS,
    stream: true,
    messages: [{ role: 'user', content: LONG_WORD }],
  });
  const socket = connect(port, host);
  socket.on('error', () => undefined);
  socket.pause();
  const head = [
    'POST /v1/messages HTTP/1.1',
    `host: ${host}:${port}`,
    `x-api-key: ${ATTACK_API_KEY}`,
    'anthropic-version: 2023-06-01',
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(body)}`,
  ].join('\r\n');
  await new Promise<void>((resolve) => socket.write(`${head}\r\n\r\n${body}`, () => resolve()));
  // The service reads the 8 MB body and admits the stream: give it that long before measuring.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return socket;
}

async function legitimateRequest(): Promise<string> {
  try {
    const response = await fetch(`${service.baseURL}/v1/messages`, {
      method: 'POST',
      headers: service.headers,
      body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    await response.arrayBuffer();
    return String(response.status);
  } catch (error) {
    return failureOf(error);
  }
}
