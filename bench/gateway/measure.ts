/**
 * How bench/gateway.ts measures its arms, round by round: each arm's throughput under load
 * (autocannon), then every arm's latency on one connection, the arms taking turns in short
 * slices, and each arm's added latency against the direct arm in the same round.
 */
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
async function measureLatencies(arms: Arm[], mode: Mode, settings: MeasureSettings): Promise<Map<string, Latency>> {
  const probes = arms.map((arm) => new LatencyProbe(arm.target(mode)));
  try {
    const slices = Math.max(1, Math.round(settings.latencySeconds / LATENCY_SLICE_SECONDS));
    for (let slice = 0; slice < slices; slice += 1)
      for (let turn = 0; turn < probes.length; turn += 1)
        await probes[(slice + turn) % probes.length]!.run(LATENCY_SLICE_SECONDS);
    return new Map(arms.map((arm, index) => [arm.name, probes[index]!.latency()]));
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
    const direct = latencies.get('direct')!;
    for (const arm of arms) {
      const latency = latencies.get(arm.name)!;
      const throughput = throughputs.get(arm.name)!;
      const addedP50 = latency.p50 - direct.p50;
      results.get(arm.name)?.push({ latency, throughput, addedP50, addedP99: latency.p99 - direct.p99 });
      console.log(
        `${mode} round ${round + 1}: ${arm.name.padEnd(12)} 1 conn p50 ${latency.p50.toFixed(3)} ms (added ${addedP50.toFixed(3)}) p99 ${latency.p99.toFixed(3)} ms (${latency.samples} req)` +
          `  |  ${settings.connections} conns ${throughput.requestsPerSecond.toFixed(0)} req/s p50 ${throughput.p50} ms p99 ${throughput.p99} ms`,
      );
    }
  }
  return arms.map((arm) => summarize(arm, results.get(arm.name) ?? []));
}
