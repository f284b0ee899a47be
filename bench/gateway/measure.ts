/**
 * How bench/gateway.ts measures its arms, round by round: each arm's throughput under load
 * (autocannon), then every arm's latency on one connection, the arms taking turns in short
 * slices, and each arm's added latency against the direct arm in the same round.
 */
import { processTreeCpuMicroseconds } from '../process-cpu.js';
import { median } from '../statistics.js';
import { LatencyProbe, runLoad, type HttpTarget, type Latency, type Throughput } from './load.js';

export type Mode = 'json' | 'stream';

/** One path to the engine: the direct arm (named `direct`), mms, or a peer gateway. */
export interface Arm {
  name: string;
  label: string;
  /** What the arm's request is: the gateways translate Messages, or pass chat completions. */
  request: string;
  target(mode: Mode): HttpTarget;
  /** The process that serves it (the gateway's; the engine's for direct), whose CPU is read. */
  pid: number;
}

export interface MeasureSettings {
  durationSeconds: number;
  latencySeconds: number;
  warmupSeconds: number;
  connections: number;
  rounds: number;
}

interface RoundResult {
  latency: Latency;
  /** Microseconds of the arm's process's CPU per request of its latency slices. */
  cpuPerRequest: number;
  throughput: Throughput;
  /** This round's p50 and p99 less the direct arm's in the same round (0 for direct itself). */
  addedP50: number;
  addedP99: number;
}

/** Warm-up, then throughput, at the load's connection count. */
async function measureThroughput(arm: Arm, mode: Mode, settings: MeasureSettings): Promise<Throughput> {
  const target = arm.target(mode);
  await runLoad(target, settings.connections, settings.warmupSeconds, 'warm-up');
  return runLoad(target, settings.connections, settings.durationSeconds, 'run');
}

/** How long each arm's latency probe runs before the next arm's takes its turn. */
export const LATENCY_SLICE_SECONDS = 0.25;

/**
 * Every arm's latency, on one connection each, in slices that take turns (the order rotating
 * from slice to slice) until each arm has had `latencySeconds`: an arm's added latency is then
 * measured against the direct arm in the same stretch of time. (Measured one arm after the
 * other, several seconds apart, the added p50 moved by 0.3 ms from round to round as the VM's
 * speed drifted: the engine's own CPU per request went from 45 to 76 µs within a minute.)
 */
async function measureLatencies(
  arms: Arm[],
  mode: Mode,
  settings: MeasureSettings,
): Promise<Map<string, { latency: Latency; cpuPerRequest: number }>> {
  const probes = arms.map((arm) => new LatencyProbe(arm.target(mode)));
  // Each arm's process's CPU over its own slices, one request at a time: what it spent per request.
  const cpu = arms.map(() => ({ microseconds: 0, requests: 0 }));
  try {
    const slices = Math.max(1, Math.round(settings.latencySeconds / LATENCY_SLICE_SECONDS));
    for (let slice = 0; slice < slices; slice += 1)
      for (let turn = 0; turn < probes.length; turn += 1) {
        const index = (slice + turn) % probes.length;
        const before = processTreeCpuMicroseconds(arms[index]!.pid);
        const requests = await probes[index]!.run(LATENCY_SLICE_SECONDS);
        cpu[index]!.microseconds += processTreeCpuMicroseconds(arms[index]!.pid) - before;
        cpu[index]!.requests += requests;
      }
    return new Map(
      arms.map((arm, index) => [
        arm.name,
        { latency: probes[index]!.latency(), cpuPerRequest: cpu[index]!.microseconds / cpu[index]!.requests },
      ]),
    );
  } finally {
    for (const probe of probes) probe.close();
  }
}

export interface ArmSummary {
  arm: Arm;
  p50: number;
  p99: number;
  /** Medians of the rounds' own differences: each measured against direct in the same slices. */
  addedP50: number;
  addedP99: number;
  /** Microseconds of the arm's process's CPU per request, one request at a time. */
  cpuPerRequest: number;
  requestsPerSecond: number;
  loadedP50: number;
  loadedP99: number;
}

function summarize(arm: Arm, results: RoundResult[]): ArmSummary {
  return {
    arm,
    p50: median(results.map((result) => result.latency.p50)),
    p99: median(results.map((result) => result.latency.p99)),
    addedP50: median(results.map((result) => result.addedP50)),
    addedP99: median(results.map((result) => result.addedP99)),
    cpuPerRequest: median(results.map((result) => result.cpuPerRequest)),
    requestsPerSecond: median(results.map((result) => result.throughput.requestsPerSecond)),
    loadedP50: median(results.map((result) => result.throughput.p50)),
    loadedP99: median(results.map((result) => result.throughput.p99)),
  };
}

export async function measureMode(arms: Arm[], mode: Mode, settings: MeasureSettings): Promise<ArmSummary[]> {
  const results = new Map<string, RoundResult[]>(arms.map((arm) => [arm.name, []]));
  for (let round = 0; round < settings.rounds; round += 1) {
    const order = round % 2 === 0 ? arms : [...arms].reverse();
    const throughputs = new Map<string, Throughput>();
    for (const arm of order) throughputs.set(arm.name, await measureThroughput(arm, mode, settings));
    // Every arm has just run under load: all of them are warm for the latency slices.
    const latencies = await measureLatencies(arms, mode, settings);
    const direct = latencies.get('direct')!.latency;
    for (const arm of arms) {
      const { latency, cpuPerRequest } = latencies.get(arm.name)!;
      const throughput = throughputs.get(arm.name)!;
      const addedP50 = latency.p50 - direct.p50;
      results.get(arm.name)?.push({ latency, cpuPerRequest, throughput, addedP50, addedP99: latency.p99 - direct.p99 });
      console.log(
        `${mode} round ${round + 1}: ${arm.name.padEnd(12)} 1 conn p50 ${latency.p50.toFixed(3)} ms (added ${addedP50.toFixed(3)}) p99 ${latency.p99.toFixed(3)} ms (${latency.samples} req), CPU ${cpuPerRequest.toFixed(0)} µs/req` +
          `  |  ${settings.connections} conns ${throughput.requestsPerSecond.toFixed(0)} req/s p50 ${throughput.p50} ms p99 ${throughput.p99} ms`,
      );
    }
  }
  return arms.map((arm) => summarize(arm, results.get(arm.name) ?? []));
}
