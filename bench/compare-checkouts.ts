/**
 * Requests per second through `POST /v1/messages` (non-streaming) of this checkout against
 * another checkout of the project, alternated in one run: the way to tell whether a change moved
 * the service, when the machine's own drift between two runs of `npm run bench` is larger than
 * the change. `--path scripted` (the default) serves the scripted backend (bench/mms-server.ts);
 * `--path gateway` the `openai-compatible` backend in front of the gateway bench's fake engine,
 * each side its own compiled `mms serve` (bench/mms-serve-process.ts, with the config of
 * bench/gateway/mms-config.ts: its `npm ci` built it; this checkout's is built when stale), one
 * engine for both sides, started from this checkout.
 *
 *   node --import tsx bench/compare-checkouts.ts <other checkout> [--path scripted|gateway]
 *                            [--rounds 6] [--duration 8] [--warmup 2] [--connections 32]
 *
 * The other checkout is the baseline, for instance the commit before a change:
 *
 *   git worktree add ../mms-base HEAD~1 && (cd ../mms-base && npm ci)
 *
 * Each side runs its own server in a child process from its own folder; rounds run the sides in
 * alternating order (A B, B A, ...). A change within a few percent shows as this
 * checkout ahead in most rounds, rather than in the medians alone.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { postUnderLoad, requestsPerSecond } from './autocannon-load.js';
import { positiveInteger, positiveNumber } from './command-arguments.js';
import { gatewayConfig } from './gateway/mms-config.js';
import { startMmsServe } from './mms-serve-process.js';
import { median } from './statistics.js';

const API_KEY = 'bench-key-123456';
const MODEL_ID = 'bench';
const REQUEST_BODY = JSON.stringify({
  model: MODEL_ID,
  max_tokens: 64,
  messages: [{ role: 'user', content: 'Summarize the benchmark in one short sentence please.' }],
});
const REQUEST_HEADERS = { 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '6' },
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    path: { type: 'string', default: 'scripted' },
  },
});
const [otherCheckout] = positionals;
if (otherCheckout === undefined || positionals.length > 1) {
  throw new Error(
    'usage: compare-checkouts.ts <other checkout> [--path scripted|gateway] [--rounds 6] [--duration 8] [--warmup 2] [--connections 32]',
  );
}
if (values.path !== 'scripted' && values.path !== 'gateway')
  throw new Error(`--path: scripted or gateway, not ${values.path}`);
const path = values.path;
const settings = {
  rounds: positiveInteger(values.rounds, 'rounds'),
  duration: positiveNumber(values.duration, 'duration'),
  warmup: positiveNumber(values.warmup, 'warmup'),
  connections: positiveInteger(values.connections, 'connections'),
};

interface Side {
  name: 'this' | 'other';
  folder: string;
  url: string;
  stop(): Promise<void>;
}

/** A server of a checkout in a child process of its own, once it has said its port over IPC. */
async function forkServer(
  name: string,
  folder: string,
  file: string,
  childArguments: string[],
): Promise<{ child: ChildProcess; message: Record<string, unknown> }> {
  const server = join(folder, file);
  if (!existsSync(server)) throw new Error(`${folder} has no ${file}: give the root of a checkout of this project`);
  if (!existsSync(join(folder, 'node_modules')))
    throw new Error(`${folder} has no node_modules: run npm ci there first`);
  const child = fork(server, childArguments, { cwd: folder, execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the ${name} server exited with code ${String(code)} before it was ready`);
  });
  const [message] = await Promise.race([once(child, 'message'), exited]);
  exited.catch(() => undefined);
  if (typeof (message as { port?: unknown }).port !== 'number')
    throw new Error(`expected { port } from the ${name} server, got ${JSON.stringify(message)}`);
  return { child, message: message as Record<string, unknown> };
}

/** The fake engine of the gateway path, shared by both sides. */
interface Engine {
  child: ChildProcess;
  baseURL: string;
  model: string;
}

async function start(name: Side['name'], folder: string, engine: Engine | undefined): Promise<Side> {
  if (engine) {
    const config = gatewayConfig({
      apiKey: API_KEY,
      modelId: MODEL_ID,
      engineBaseURL: engine.baseURL,
      engineModel: engine.model,
      layout: 'single',
    });
    const served = await startMmsServe(`${name} checkout's mms`, config, {
      checkout: name === 'this' ? undefined : folder,
    });
    return { name, folder, url: `http://127.0.0.1:${served.port}/v1/messages`, stop: served.stop };
  }
  const { child, message } = await forkServer(`${name} checkout's`, folder, join('bench', 'mms-server.ts'), [
    API_KEY,
    MODEL_ID,
  ]);
  return {
    name,
    folder,
    url: `http://127.0.0.1:${String(message.port)}/v1/messages`,
    stop: async () => void child.disconnect(),
  };
}

async function measure(side: Side): Promise<number> {
  const load = { url: side.url, headers: REQUEST_HEADERS, body: REQUEST_BODY, connections: settings.connections };
  await postUnderLoad({ ...load, duration: settings.warmup }, `${side.name} warm-up`);
  return requestsPerSecond(await postUnderLoad({ ...load, duration: settings.duration }, `${side.name} run`));
}

const thisCheckout = resolve(fileURLToPath(new URL('..', import.meta.url)));
let engine: Engine | undefined;
if (path === 'gateway') {
  const { child, message } = await forkServer(
    'fake engine',
    thisCheckout,
    join('bench', 'gateway', 'fake-engine.ts'),
    [],
  );
  engine = { child, baseURL: `http://127.0.0.1:${String(message.port)}/v1`, model: String(message.model) };
}
const sides = [await start('this', thisCheckout, engine), await start('other', resolve(otherCheckout), engine)];
const rates = { this: [] as number[], other: [] as number[] };
try {
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) rates[side.name].push(await measure(side));
    const ratio = rates.this[round]! / rates.other[round]!;
    console.log(
      `round ${round + 1}: this ${rates.this[round]!.toFixed(0)} req/s, other ${rates.other[round]!.toFixed(0)} req/s, this / other ${ratio.toFixed(3)}`,
    );
  }
} finally {
  for (const side of sides) await side.stop();
  engine?.child.disconnect();
}

const ratios = rates.this.map((rate, round) => rate / rates.other[round]!);
const ahead = ratios.filter((ratio) => ratio > 1).length;
console.log(`\npath: ${path}\nthis: ${thisCheckout}\nother: ${resolve(otherCheckout)}`);
console.log(
  `median requests/s: this ${median(rates.this).toFixed(0)}, other ${median(rates.other).toFixed(0)}; ratio of the medians ${(median(rates.this) / median(rates.other)).toFixed(3)}`,
);
console.log(
  `round by round this / other: ${ratios.map((ratio) => ratio.toFixed(3)).join(', ')} (this ahead in ${ahead} of ${ratios.length})`,
);
