/**
 * Code execution sandbox latency: a trivial program (`print(1)`) from a warm pool (sandbox
 * already loaded) against a cold start (a sandbox started for the execution, from the Python
 * snapshot, and from scratch without it), and kill latency (from a limit being hit to the
 * sandbox being gone) for the time and the memory limit. See docs/benchmarks.md.
 *
 *   node --import tsx bench/code-sandbox.ts [--rounds 7]
 *
 * Runs are one after another, so that a cold start is not slowed by the next one loading
 * beside it. A warm round waits until the pool's replacement is loaded and counts only pool
 * hits; every figure is the median of its rounds.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { codeExecutionConfig } from '../packages/server/src/config/config-schema.js';
import {
  ChildProcessRunner,
  type ChildProcessRunnerOptions,
} from '../packages/server/src/tools/code-execution/child-process-runner.js';
import type { RunOutcome } from '../packages/server/src/tools/code-execution/code-runner.js';
import { median } from './statistics.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '7' } } });
const ROUNDS = Number(values.rounds);
const TRIVIAL = 'print(1)';
/** Long enough for a snapshot load on a busy two-core machine; a warm round waits this for the refill. */
const REFILL_WAIT_MS = 4_000;

const base: ChildProcessRunnerOptions = { ...codeExecutionConfig.parse({}), timeoutMs: 1_000, memoryMb: 300 };

async function run(runner: ChildProcessRunner, code: string): Promise<{ outcome: RunOutcome; totalMs: number }> {
  const started = performance.now();
  const outcome = await runner.run(code, {
    hostFunctions: [],
    callHost: () => Promise.reject(new Error('no host functions here')),
    signal: new AbortController().signal,
  });
  if (outcome.kind === 'unavailable' || outcome.kind === 'busy')
    throw new Error(`the sandbox answered ${outcome.kind}: ${JSON.stringify(outcome)}`);
  return { outcome, totalMs: performance.now() - started };
}

/** Latency of `print(1)` from asking to the result, over the rounds. */
async function startLatency(
  options: Partial<ChildProcessRunnerOptions>,
  wantWarm: boolean,
): Promise<{ totalMs: number; runMs: number; hits: number }> {
  const runner = new ChildProcessRunner({ ...base, ...options });
  const totals: number[] = [];
  const runs: number[] = [];
  try {
    await run(runner, TRIVIAL); // platform probe and snapshot: once per service, not per execution
    for (let round = 0; round < ROUNDS; round += 1) {
      if (wantWarm) await sleep(REFILL_WAIT_MS);
      const { outcome, totalMs } = await run(runner, TRIVIAL);
      if (outcome.kind !== 'exited' || outcome.stdout !== '1\n')
        throw new Error(`unexpected outcome ${JSON.stringify(outcome)}`);
      if (outcome.timings.warm !== wantWarm) continue;
      totals.push(totalMs);
      runs.push(outcome.timings.runMs);
    }
  } finally {
    await runner.close();
  }
  return { totalMs: median(totals), runMs: median(runs), hits: totals.length };
}

/** Time from the limit being hit (deadline fired, memory over the cap) to the sandbox gone. */
async function killLatency(code: string, reason: 'time_limit' | 'memory_limit'): Promise<number> {
  const runner = new ChildProcessRunner({ ...base, poolSize: 1 });
  const kills: number[] = [];
  try {
    await run(runner, TRIVIAL);
    for (let round = 0; round < ROUNDS; round += 1) {
      const { outcome } = await run(runner, code);
      if (outcome.kind !== 'killed' || outcome.reason !== reason || outcome.timings.killMs === undefined)
        throw new Error(`expected a ${reason} kill, got ${JSON.stringify(outcome)}`);
      kills.push(outcome.timings.killMs);
    }
  } finally {
    await runner.close();
  }
  return median(kills);
}

const format = (ms: number) => `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;

const warm = await startLatency({ poolSize: 1 }, true);
const cold = await startLatency({ poolSize: 0 }, false);
const scratch = await startLatency({ poolSize: 0, useSnapshot: false }, false);
const timeKill = await killLatency('while True:\n    pass', 'time_limit');
const memoryKill = await killLatency('chunks = []\nwhile True:\n    chunks.append(b"x" * (16 << 20))', 'memory_limit');

console.log(`print(1), median of ${ROUNDS} rounds (warm: ${warm.hits} pool hits)\n`);
console.log('| start                           | ask -> result | of which running | vs warm |');
console.log('| ------------------------------- | ------------: | ---------------: | ------: |');
for (const [name, figures] of [
  ['warm (pool hit)', warm],
  ['cold, from the Python snapshot', cold],
  ['cold, Python from scratch', scratch],
] as const) {
  console.log(
    `| ${name.padEnd(31)} | ${format(figures.totalMs).padStart(13)} | ${format(figures.runMs).padStart(16)} | ${`${(figures.totalMs / warm.totalMs).toFixed(1)}x`.padStart(7)} |`,
  );
}
console.log('\n| kill                            | limit hit -> sandbox gone |');
console.log('| ------------------------------- | ------------------------: |');
console.log(`| time limit (infinite loop)      | ${format(timeKill).padStart(25)} |`);
console.log(`| memory limit (16 MB a step)     | ${format(memoryKill).padStart(25)} |`);
console.log(
  `\nkill vs warm start: time ${(timeKill / warm.totalMs).toFixed(2)}x, memory ${(memoryKill / warm.totalMs).toFixed(2)}x`,
);
