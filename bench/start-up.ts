/**
 * How soon `mms` answers (issue 18, start-up): the wall time of `mms --help` and `mms --version`
 * from the spawn to the exit, and of `mms serve` on the scripted config (examples/scripted.json,
 * port 0) from the spawn to its first 200 from /health, each as a user runs it: the checkout's
 * bin (packages/server/bin/mms.js) under plain node. `node -e 0` is measured beside them, as the
 * floor no command can go under.
 *
 *   node --import tsx bench/start-up.ts [--baseline <other checkout>] [--rounds 10]
 *
 * The baseline, a checkout from before the change (`git worktree add ../mms-base <commit>` and
 * `npm ci` there), shows what it replaced; the checkouts alternate within each round. Medians and
 * maxima of the rounds, in milliseconds.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { positiveInteger } from './command-arguments.js';
import { median } from './statistics.js';

const API_KEY = 'bench-key-123456';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '10' },
  },
});
const rounds = positiveInteger(values.rounds, 'rounds');

interface Checkout {
  name: string;
  root: string;
}

/** Milliseconds from the spawn to the exit of `node args`; a non-zero exit stops the run. */
async function timedRun(args: string[], cwd: string, environment: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, env: environment, stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += String(chunk)));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited with ${code}: ${errors}`);
  return performance.now() - started;
}

/** Milliseconds from the spawn of `mms serve` to its first 200 from /health; the service is then stopped. */
async function timedServe(checkout: Checkout, config: string, environment: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [binOf(checkout), 'serve', '--config', config], {
    cwd: checkout.root,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`${checkout.name}: mms serve exited with ${child.exitCode}: ${output}`);
      const port = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1];
      if (port !== undefined && (await healthy(Number(port)))) return performance.now() - started;
      if (performance.now() - started > 60_000) throw new Error(`${checkout.name}: no /health within 60 s: ${output}`);
      await sleep(2);
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((done) => child.on('close', done));
  }
}

async function healthy(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/health`)).status === 200;
  } catch {
    return false;
  }
}

function binOf(checkout: Checkout): string {
  return join(checkout.root, 'packages', 'server', 'bin', 'mms.js');
}

function checkoutAt(name: string, root: string): Checkout {
  const checkout = { name, root: resolve(root) };
  if (!existsSync(binOf(checkout)))
    throw new Error(`${root} has no packages/server/bin/mms.js: give the root of a checkout`);
  if (!existsSync(join(checkout.root, 'node_modules')))
    throw new Error(`${root} has no node_modules: run npm ci there`);
  return checkout;
}

function summary(label: string, times: number[]): string {
  const measured = times.filter(Number.isFinite);
  if (measured.length === 0) return `${label.padEnd(28)} not supported`;
  const middle = median(measured).toFixed(0).padStart(5);
  return `${label.padEnd(28)} median ${middle} ms   max ${Math.max(...measured)
    .toFixed(0)
    .padStart(5)} ms`;
}

const checkouts = [checkoutAt('this', fileURLToPath(new URL('..', import.meta.url)))];
if (values.baseline !== undefined) checkouts.push(checkoutAt('baseline', values.baseline));

const folder = mkdtempSync(join(tmpdir(), 'mms-start-up-'));
const config = join(folder, 'scripted.json');
const scripted = JSON.parse(readFileSync(new URL('../examples/scripted.json', import.meta.url), 'utf8')) as object;
writeFileSync(config, JSON.stringify({ ...scripted, $schema: undefined, listen: { host: '127.0.0.1', port: 0 } }));
// A data folder of its own, so that the signing key is made once (in the warm-up) and never in the home folder.
const environment = { ...process.env, MMS_API_KEYS: API_KEY, MMS_DATA_FOLDER: join(folder, 'data') };

const times = new Map<string, number[]>();
const record = (label: string, time: number) => times.set(label, [...(times.get(label) ?? []), time]);
try {
  // One unrecorded round: the first start of each checkout makes its key and fills the file cache.
  for (let round = 0; round <= rounds; round += 1) {
    const measured = (label: string, time: number) => round > 0 && record(label, time);
    measured('node -e 0', await timedRun(['-e', '0'], folder, environment));
    for (const checkout of checkouts) {
      measured(`${checkout.name}: mms --help`, await timedRun([binOf(checkout), '--help'], checkout.root, environment));
      measured(
        `${checkout.name}: mms --version`,
        // A baseline from before --version fails it: not counted, and the round goes on.
        await timedRun([binOf(checkout), '--version'], checkout.root, environment).catch(() => Number.NaN),
      );
      measured(`${checkout.name}: serve to /health`, await timedServe(checkout, config, environment));
    }
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
process.stdout.write(`${rounds} rounds, Node ${process.version}\n`);
for (const [label, measured] of times) process.stdout.write(`${summary(label, measured)}\n`);
