/**
 * Requests per second through `POST /v1/messages` (scripted backend, non-streaming) next to
 * a bare node:http server answering the same JSON, in one run. See docs/benchmarks.md.
 *
 *   npm run bench -- [--duration 10] [--warmup 2] [--connections 32] [--rounds 2] [--profile]
 *
 * Each server runs in its own child process so that the load generator (this process) never
 * shares its event loop. Runs alternate A B B A ... so that drift of the machine (thermal,
 * other work) falls on both sides alike; the table shows the median of the rounds.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { CannedReply } from './bare-server.js';
import { postUnderLoad, requestsPerSecond } from './autocannon-load.js';
import { median } from './statistics.js';
import { positiveNumber } from './command-arguments.js';

const API_KEY = 'bench-key-123456';
const MODEL_ID = 'bench';
const REQUEST_BODY = JSON.stringify({
  model: MODEL_ID,
  max_tokens: 64,
  messages: [{ role: 'user', content: 'Summarize the benchmark in one short sentence please.' }],
});
const REQUEST_HEADERS = { 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
const AIM_RATIO = 0.6;
// Outside the repository, so that profiling leaves nothing to commit by mistake.
const PROFILE_FOLDER = join(tmpdir(), 'mms-bench-profiles');

// --- settings ----------------------------------------------------------------------------

interface BenchSettings {
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  rounds: number;
  profile: boolean;
}


function readSettings(): BenchSettings {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '2' },
      profile: { type: 'boolean', default: false },
    },
  });
  return {
    durationSeconds: positiveNumber(values.duration, 'duration'),
    warmupSeconds: positiveNumber(values.warmup, 'warmup'),
    connections: Math.round(positiveNumber(values.connections, 'connections')),
    rounds: Math.round(positiveNumber(values.rounds, 'rounds')),
    profile: values.profile,
  };
}

// --- child servers -----------------------------------------------------------------------

interface ServerProcess {
  name: string;
  url: string;
  stop(): Promise<void>;
}

function benchFile(name: string): string {
  return fileURLToPath(new URL(name, import.meta.url));
}

function readPort(message: unknown): number {
  const port = typeof message === 'object' && message !== null ? (message as { port?: unknown }).port : undefined;
  if (typeof port !== 'number') throw new Error(`expected { port } from a bench server, got ${JSON.stringify(message)}`);
  return port;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  // Closing the IPC channel asks the child to exit on its own, which lets --cpu-prof finish.
  child.disconnect();
  await exited;
}

/** Forks `file` with tsx; `firstMessage` is sent before waiting for the port. */
async function startChild(name: string, file: string, childArguments: string[], profile: boolean, firstMessage?: CannedReply): Promise<ServerProcess> {
  // One folder per server: tsx's loader thread writes a profile of its own next to the main one.
  const profileFlags = profile ? ['--cpu-prof', '--cpu-prof-dir', join(PROFILE_FOLDER, name)] : [];
  const child = fork(benchFile(file), childArguments, { execArgv: ['--import', 'tsx', ...profileFlags], stdio: 'inherit' });
  const failed = once(child, 'exit').then(([code]) => {
    throw new Error(`${name} server exited with code ${String(code)} before it was ready`);
  });
  if (firstMessage !== undefined) child.send(firstMessage);
  const [message] = await Promise.race([once(child, 'message'), failed]);
  failed.catch(() => undefined);
  return { name, url: `http://127.0.0.1:${readPort(message)}/v1/messages`, stop: () => stopChild(child) };
}

/** One real reply from mms, so that the baseline answers the very same bytes. */
async function captureReply(url: string): Promise<CannedReply> {
  const response = await fetch(url, { method: 'POST', headers: REQUEST_HEADERS, body: REQUEST_BODY });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`mms answered ${response.status} to the benchmark request: ${body}`);
  const parsed = JSON.parse(body) as { type?: unknown };
  if (parsed.type !== 'message') throw new Error(`mms did not answer a message: ${body}`);
  return { body, contentType: response.headers.get('content-type') ?? 'application/json' };
}

// --- load --------------------------------------------------------------------------------

interface Measurement {
  requestsPerSecond: number;
  p50: number;
  p99: number;
}

async function measure(server: ServerProcess, settings: BenchSettings): Promise<Measurement> {
  const load = { url: server.url, headers: REQUEST_HEADERS, body: REQUEST_BODY, connections: settings.connections };
  await postUnderLoad({ ...load, duration: settings.warmupSeconds }, `${server.name} warm-up`);
  const result = await postUnderLoad({ ...load, duration: settings.durationSeconds }, `${server.name} run`);
  return { requestsPerSecond: requestsPerSecond(result), p50: result.latency.p50, p99: result.latency.p99 };
}

/** Round r runs A B when r is even and B A when odd: A B B A A B ... */
function orderOfRound<T>(round: number, pair: readonly [T, T]): T[] {
  return round % 2 === 0 ? [pair[0], pair[1]] : [pair[1], pair[0]];
}

async function measureAlternating(servers: readonly [ServerProcess, ServerProcess], settings: BenchSettings): Promise<Map<string, Measurement[]>> {
  const measurements = new Map<string, Measurement[]>(servers.map((server) => [server.name, []]));
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const server of orderOfRound(round, servers)) {
      const measurement = await measure(server, settings);
      measurements.get(server.name)?.push(measurement);
      console.log(`round ${round + 1}: ${server.name.padEnd(5)} ${measurement.requestsPerSecond.toFixed(0)} req/s  p50 ${measurement.p50} ms  p99 ${measurement.p99} ms`);
    }
  }
  return measurements;
}

// --- report ------------------------------------------------------------------------------


function medianMeasurement(measurements: Measurement[]): Measurement {
  return {
    requestsPerSecond: median(measurements.map((measurement) => measurement.requestsPerSecond)),
    p50: median(measurements.map((measurement) => measurement.p50)),
    p99: median(measurements.map((measurement) => measurement.p99)),
  };
}

function printTable(rows: Array<[string, Measurement]>, settings: BenchSettings): void {
  console.log('');
  console.log(`median of ${settings.rounds} rounds, ${settings.connections} connections, ${settings.durationSeconds} s each (after ${settings.warmupSeconds} s warm-up), node ${process.version}`);
  console.log('');
  console.log('| server                       | requests/s | p50 latency | p99 latency |');
  console.log('| ---------------------------- | ---------: | ----------: | ----------: |');
  for (const [label, measurement] of rows) {
    console.log(`| ${label.padEnd(28)} | ${measurement.requestsPerSecond.toFixed(0).padStart(10)} | ${`${measurement.p50} ms`.padStart(11)} | ${`${measurement.p99} ms`.padStart(11)} |`);
  }
}

function printRatio(mms: Measurement, bare: Measurement): void {
  const ratio = mms.requestsPerSecond / bare.requestsPerSecond;
  console.log('');
  console.log(`ratio mms / bare: ${ratio.toFixed(2)} (aim: >= ${AIM_RATIO}) — ${ratio >= AIM_RATIO ? 'meets the aim' : 'BELOW the aim'}`);
}

// --- main --------------------------------------------------------------------------------

async function main(): Promise<void> {
  const settings = readSettings();
  const mms = await startChild('mms', 'mms-server.ts', [API_KEY, MODEL_ID], settings.profile);
  const started: ServerProcess[] = [mms];
  try {
    const bare = await startChild('bare', 'bare-server.ts', [], settings.profile, await captureReply(mms.url));
    started.push(bare);
    const measurements = await measureAlternating([mms, bare], settings);
    const mmsMedian = medianMeasurement(measurements.get(mms.name) ?? []);
    const bareMedian = medianMeasurement(measurements.get(bare.name) ?? []);
    printTable(
      [
        ['mms POST /v1/messages', mmsMedian],
        ['bare node:http, same JSON', bareMedian],
      ],
      settings,
    );
    printRatio(mmsMedian, bareMedian);
  } finally {
    await Promise.all(started.map((server) => server.stop()));
  }
  if (settings.profile) console.log(`\nCPU profiles written to ${PROFILE_FOLDER} (open in Chrome DevTools or speedscope)`);
}

await main();
