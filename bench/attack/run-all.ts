/**
 * The attack suite (issue 16): every script in bench/attack/ in turn, with modest settings so that
 * the whole suite stays well under 15 minutes on 2 cores, each as a process of its own whose
 * output goes to this terminal. Then one table from their `attack-summary` lines
 * (summary-line.ts): case, crashes, 5xx, worst /health stall, worst event-loop delay, peak RSS. Loopback only. Exits 1
 * when a script failed or any case crashed the service, got a 5xx or another finding.
 *
 *   npm run attack [-- --checkout ../mms-main] [-- --only fuzz]
 *
 * --checkout runs every attack against another checkout's `mms serve`; --only runs the steps
 * whose name contains the text.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { summaryRowsIn, type SummaryRow } from './summary-line.js';

const { values } = parseArgs({ options: { checkout: { type: 'string' }, only: { type: 'string' } } });

interface Step {
  name: string;
  script: string;
  arguments: string[];
  /** The step is stopped after this long; its rows, if any, still count. */
  limitSeconds: number;
}

const STEPS: Step[] = [
  // 11 cases, each on a fresh service.
  { name: 'input cost', script: 'input-cost.ts', arguments: [], limitSeconds: 300 },
  { name: 'sandbox flood', script: 'sandbox-flood.ts', arguments: ['--floods', '4'], limitSeconds: 300 },
  {
    name: 'slow readers',
    script: 'slow-readers.ts',
    arguments: ['--seconds', '10', '--write-timeout-ms', '3000'],
    limitSeconds: 60,
  },
  {
    name: 'slowloris idle',
    script: 'slowloris.ts',
    arguments: ['--mode', 'idle', '--seconds', '10'],
    limitSeconds: 60,
  },
  {
    name: 'slowloris trickle',
    script: 'slowloris.ts',
    arguments: ['--mode', 'trickle', '--seconds', '10'],
    limitSeconds: 60,
  },
  // Issue 31: three kinds of schema, 100 distinct ones each, on a fresh service each.
  { name: 'schema flood', script: 'schema-flood.ts', arguments: ['--count', '100'], limitSeconds: 240 },
  // Issue 31: bursts of 1,500 requests on the memory store and on Redis, healthy, paused, killed.
  { name: 'limit bursts', script: 'limit-bursts.ts', arguments: ['--burst', '1500'], limitSeconds: 300 },
  // 60 bodies of 30 MB at once: past the default budget of any machine (at most 1 GB).
  { name: 'body flood', script: 'body-flood.ts', arguments: ['--bodies', '60'], limitSeconds: 180 },
  {
    name: 'bad-input fuzz',
    script: 'bad-input-fuzz.ts',
    arguments: ['--count', '20000', '--seconds', '240'],
    limitSeconds: 300,
  },
];

interface StepResult {
  step: Step;
  exitCode: number | null;
  rows: SummaryRow[];
  seconds: number;
}

/** Runs one step, echoing its output, and keeps the output for its summary line. */
function runStep(step: Step): Promise<StepResult> {
  const started = performance.now();
  const checkout = values.checkout === undefined ? [] : ['--checkout', values.checkout];
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL(step.script, import.meta.url)), ...step.arguments, ...checkout],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    process.stdout.write(chunk);
  });
  // SIGINT lets a script's `finally` kill its service; SIGKILL if it does not end soon after.
  const limit = setTimeout(() => {
    console.log(`\n${step.name}: stopped after ${step.limitSeconds} s`);
    child.kill('SIGINT');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  }, step.limitSeconds * 1000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(limit);
      resolve({ step, exitCode: code, rows: summaryRowsIn(output), seconds: (performance.now() - started) / 1000 });
    });
  });
}

function cell(value: number | null | undefined, unit: string): string {
  return value === null || value === undefined ? 'n/a' : `${value.toFixed(0)}${unit}`;
}

const loadBefore = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
const started = performance.now();
const results: StepResult[] = [];
for (const step of STEPS) {
  if (values.only !== undefined && !step.name.includes(values.only)) continue;
  console.log(`\n=== ${step.name}: ${step.script} ${step.arguments.join(' ')}\n`);
  results.push(await runStep(step));
}
const loadAfter = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');

console.log(
  `\n=== attack suite: ${((performance.now() - started) / 60_000).toFixed(1)} min; ${values.checkout ?? 'this checkout'}; node ${process.version}; load average before ${loadBefore}, after ${loadAfter}\n`,
);
console.log('| case | crashes | 5xx | other findings | worst /health stall | worst loop delay | peak RSS |');
console.log('|---|--:|--:|--:|--:|--:|--:|');
let failed = false;
for (const result of results) {
  // The fuzz exits 1 on a finding, which its rows already count.
  if (result.exitCode !== 0 && result.step.script !== 'bad-input-fuzz.ts') failed = true;
  if (result.rows.length === 0) failed = true;
  if (result.rows.length === 0)
    console.log(
      `| ${result.step.name}: no summary (exit ${String(result.exitCode)} after ${result.seconds.toFixed(0)} s) | | | | | | |`,
    );
  for (const row of result.rows) {
    if (row.crashes + row.serverErrors + (row.otherFindings ?? 0) > 0) failed = true;
    console.log(
      `| ${row.case} | ${row.crashes} | ${row.serverErrors} | ${row.otherFindings ?? 0} | ${cell(row.worstStallMs, ' ms')} | ${cell(row.worstLoopDelayMs, ' ms')} | ${cell(row.peakRssMb, ' MB')} |`,
    );
  }
}
process.exitCode = failed ? 1 : 0;
