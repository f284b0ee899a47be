/**
 * Requests per second through `POST /v1/messages` (scripted backend, non-streaming) next to
 * a bare node:http server answering the same JSON, in one run. See docs/benchmarks.md.
 *
 *   npm run bench -- [--duration 10] [--warmup 2] [--connections 32] [--rounds 2] [--profile]
 *                    [--calibrate 10,20,40]
 *
 * Each server runs in its own child process so that the load generator (this process) never
 * shares its event loop. Runs alternate A B ... B A so that drift of the machine (thermal,
 * other work) falls on every side alike; the table shows the median of the rounds.
 *
 * --calibrate adds bare servers that busy-wait the given microseconds per request, measured in
 * the same alternation. Their requests per second show what the aim's ratio means in work per
 * request on the machine of the run, and how much work mms's own rate corresponds to.
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
  /** Microseconds of busy work per request for the calibration servers; empty without --calibrate. */
  calibration: number[];
}

function readSettings(): BenchSettings {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '2' },
      profile: { type: 'boolean', default: false },
      calibrate: { type: 'string' },
    },
  });
  return {
    durationSeconds: positiveNumber(values.duration, 'duration'),
    warmupSeconds: positiveNumber(values.warmup, 'warmup'),
    connections: Math.round(positiveNumber(values.connections, 'connections')),
    rounds: Math.round(positiveNumber(values.rounds, 'rounds')),
    profile: values.profile,
    calibration:
      values.calibrate === undefined
        ? []
        : values.calibrate.split(',').map((item) => positiveNumber(item.trim(), 'calibrate')),
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
  if (typeof port !== 'number')
    throw new Error(`expected { port } from a bench server, got ${JSON.stringify(message)}`);
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
async function startChild(
  name: string,
  file: string,
  childArguments: string[],
  profile: boolean,
  firstMessage?: CannedReply,
): Promise<ServerProcess> {
  // One folder per server: tsx's loader thread writes a profile of its own next to the main one.
  const profileFlags = profile ? ['--cpu-prof', '--cpu-prof-dir', join(PROFILE_FOLDER, name)] : [];
  const child = fork(benchFile(file), childArguments, {
    execArgv: ['--import', 'tsx', ...profileFlags],
    stdio: 'inherit',
  });
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

/** Round r runs the servers in order when r is even and in reverse when odd: A B C C B A A B C ... */
function orderOfRound<T>(round: number, servers: readonly T[]): T[] {
  return round % 2 === 0 ? [...servers] : [...servers].reverse();
}

async function measureAlternating(
  servers: readonly ServerProcess[],
  settings: BenchSettings,
): Promise<Map<string, Measurement[]>> {
  const measurements = new Map<string, Measurement[]>(servers.map((server) => [server.name, []]));
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const server of orderOfRound(round, servers)) {
      const measurement = await measure(server, settings);
      measurements.get(server.name)?.push(measurement);
      console.log(
        `round ${round + 1}: ${server.name.padEnd(10)} ${measurement.requestsPerSecond.toFixed(0)} req/s  p50 ${measurement.p50} ms  p99 ${measurement.p99} ms`,
      );
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

function printTable(rows: Array<[string, Measurement]>, bare: Measurement, settings: BenchSettings): void {
  console.log('');
  console.log(
    `median of ${settings.rounds} rounds, ${settings.connections} connections, ${settings.durationSeconds} s each (after ${settings.warmupSeconds} s warm-up), node ${process.version}`,
  );
  console.log('');
  console.log('| server                         | requests/s | ratio to bare | p50 latency | p99 latency |');
  console.log('| ------------------------------ | ---------: | ------------: | ----------: | ----------: |');
  for (const [label, measurement] of rows) {
    const ratio = (measurement.requestsPerSecond / bare.requestsPerSecond).toFixed(2);
    console.log(
      `| ${label.padEnd(30)} | ${measurement.requestsPerSecond.toFixed(0).padStart(10)} | ${ratio.padStart(13)} | ${`${measurement.p50} ms`.padStart(11)} | ${`${measurement.p99} ms`.padStart(11)} |`,
    );
  }
}

/**
 * The ratio of the medians, the aim's number, and under it each round's own ratio: a round's
 * two runs sit next to each other in time, so the spread of these shows how far one slow run
 * (of either server) moved the medians.
 */
function printRatio(mms: Measurement, bare: Measurement, mmsRounds: Measurement[], bareRounds: Measurement[]): void {
  const ratio = mms.requestsPerSecond / bare.requestsPerSecond;
  const perRound = mmsRounds.map(
    (round, index) => round.requestsPerSecond / (bareRounds[index]?.requestsPerSecond ?? Number.NaN),
  );
  console.log('');
  console.log(
    `ratio mms / bare: ${ratio.toFixed(2)} (aim: >= ${AIM_RATIO}) — ${ratio >= AIM_RATIO ? 'meets the aim' : 'BELOW the aim'}`,
  );
  console.log(
    `  round by round: ${perRound.map((value) => value.toFixed(2)).join(', ')} (median ${median(perRound).toFixed(2)})`,
  );
}

/**
 * Microseconds per request against microseconds of busy work, fitted as a straight line
 * (least squares): each calibration server is limited by its own work, so its time per
 * request is a fixed part plus the work at some slope. The plain bare server is left out, as
 * at full speed it is often limited by the load generator instead.
 */
function fitTimePerRequest(points: Array<{ work: number; requestsPerSecond: number }>): {
  fixed: number;
  slope: number;
} {
  const xs = points.map((point) => point.work);
  const ys = points.map((point) => 1e6 / point.requestsPerSecond);
  const meanX = xs.reduce((sum, x) => sum + x, 0) / xs.length;
  const meanY = ys.reduce((sum, y) => sum + y, 0) / ys.length;
  let covariance = 0;
  let variance = 0;
  xs.forEach((x, index) => {
    covariance += (x - meanX) * ((ys[index] ?? meanY) - meanY);
    variance += (x - meanX) ** 2;
  });
  const slope = covariance / variance;
  return { fixed: meanY - slope * meanX, slope };
}

function printCalibration(
  calibration: Array<{ work: number; measurement: Measurement }>,
  mms: Measurement,
  bare: Measurement,
): void {
  const fit = fitTimePerRequest(
    calibration.map(({ work, measurement }) => ({ work, requestsPerSecond: measurement.requestsPerSecond })),
  );
  const workAt = (requestsPerSecond: number): number => (1e6 / requestsPerSecond - fit.fixed) / fit.slope;
  const aimRate = AIM_RATIO * bare.requestsPerSecond;
  console.log('');
  console.log(
    `calibration: a bare server's time per request = ${fit.fixed.toFixed(1)} µs + ${fit.slope.toFixed(2)} × its busy work (least squares over ${calibration.length} points)`,
  );
  console.log(
    `  the aim (${aimRate.toFixed(0)} requests/s, ${AIM_RATIO} of bare) leaves ${workAt(aimRate).toFixed(1)} µs of work per request above bare's on this machine`,
  );
  console.log(
    `  mms's ${mms.requestsPerSecond.toFixed(0)} requests/s is what a bare server doing ${workAt(mms.requestsPerSecond).toFixed(1)} µs of work per request reaches`,
  );
}

// --- main --------------------------------------------------------------------------------

async function main(): Promise<void> {
  const settings = readSettings();
  if (settings.calibration.length === 1)
    throw new Error('--calibrate needs at least two amounts of work, to fit a line through them');
  const mms = await startChild('mms', 'mms-server.ts', [API_KEY, MODEL_ID], settings.profile);
  const started: ServerProcess[] = [mms];
  try {
    const reply = await captureReply(mms.url);
    const bare = await startChild('bare', 'bare-server.ts', [], settings.profile, reply);
    started.push(bare);
    const calibrationServers: Array<{ work: number; server: ServerProcess }> = [];
    for (const work of settings.calibration) {
      const server = await startChild(`bare+${work}µs`, 'bare-server.ts', [String(work)], false, reply);
      started.push(server);
      calibrationServers.push({ work, server });
    }
    const measurements = await measureAlternating(started, settings);
    const medianOf = (server: ServerProcess): Measurement => medianMeasurement(measurements.get(server.name) ?? []);
    const mmsMedian = medianOf(mms);
    const bareMedian = medianOf(bare);
    const calibration = calibrationServers.map(({ work, server }) => ({ work, measurement: medianOf(server) }));
    printTable(
      [
        ['mms POST /v1/messages', mmsMedian],
        ['bare node:http, same JSON', bareMedian],
        ...calibration.map(({ work, measurement }): [string, Measurement] => [
          `bare + ${work} µs busy work`,
          measurement,
        ]),
      ],
      bareMedian,
      settings,
    );
    printRatio(mmsMedian, bareMedian, measurements.get(mms.name) ?? [], measurements.get(bare.name) ?? []);
    if (calibration.length > 0) printCalibration(calibration, mmsMedian, bareMedian);
  } finally {
    await Promise.all(started.map((server) => server.stop()));
  }
  if (settings.profile)
    console.log(`\nCPU profiles written to ${PROFILE_FOLDER} (open in Chrome DevTools or speedscope)`);
}

await main();
