/**
 * How soon a streamed request hears from the service (issue 17, early stream start): the time
 * from sending the request to its response headers, its first body byte, message_start and its
 * first token, in two cases that keep a stream waiting after admission:
 *
 *   - prefill: a lone request to an OpenAI-compatible engine (a fake one in this process) that
 *     sends nothing for `--prefill` ms and then its answer, as an engine evaluating a long
 *     prompt does. (The scripted backend cannot stand in here: it sends a block's start before
 *     its first token's delay.)
 *   - queued: a request to a scripted model with `tokenDelayMs` and `concurrency: 1`, sent while
 *     another request holds the one slot, so that it waits in the admission queue for the
 *     other's whole reply (`--blocker-tokens` tokens of `--token-delay` ms).
 *
 *   node --import tsx bench/early-stream-start.ts [--baseline <other checkout>] [--rounds 5]
 *                         [--prefill 2000] [--token-delay 200] [--blocker-tokens 10]
 *
 * Each checkout runs its own `mms serve` (packages/server/bin/mms.js) in a child process, on one
 * config written here. The baseline, a checkout from before the change (`git worktree add
 * ../mms-base <commit>` and `npm ci` there), shows the behaviour it replaced: headers only with
 * the first output. Times are from this process's clock, loopback only; medians and maxima of
 * the rounds, the checkouts alternated.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { positiveInteger, positiveNumber } from './command-arguments.js';
import { median } from './statistics.js';

const API_KEY = 'bench-key-123456';
const MODEL_ID = 'bench';
const HEADERS = { 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    prefill: { type: 'string', default: '2000' },
    'token-delay': { type: 'string', default: '200' },
    'blocker-tokens': { type: 'string', default: '10' },
  },
});
const settings = {
  rounds: positiveInteger(values.rounds, 'rounds'),
  prefillMs: positiveNumber(values.prefill, 'prefill'),
  tokenDelayMs: positiveNumber(values['token-delay'], 'token-delay'),
  blockerTokens: positiveInteger(values['blocker-tokens'], 'blocker-tokens'),
};
const ENGINE_MODEL = 'bench-engine';
const PREFILL_MODEL = 'bench-prefill';

/** Milliseconds from sending the request to each point of its reply. */
interface Timings {
  headers: number;
  firstByte: number;
  messageStart: number;
  firstContent: number;
}

interface Server {
  name: string;
  child: ChildProcess;
  port: number;
}

/**
 * An OpenAI-compatible engine with a slow prefill: every streamed chat completion waits
 * `prefillMs`, then sends one token, its finish and `[DONE]`.
 */
async function startSlowEngine(prefillMs: number): Promise<{ server: HttpServer; baseURL: string }> {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: ENGINE_MODEL, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server = createHttpServer((incoming, response) => {
    incoming.resume();
    if (incoming.method === 'GET') {
      response.writeHead(200, { 'content-type': 'application/json' });
      return void response.end(JSON.stringify({ object: 'list', data: [{ id: ENGINE_MODEL, object: 'model' }] }));
    }
    incoming.on('end', () => {
      const timer = setTimeout(() => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(`${chunk({ role: 'assistant', content: 'Hi' }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`);
      }, prefillMs);
      response.on('close', () => clearTimeout(timer));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

async function startServer(name: string, checkout: string, configFile: string, dataFolder: string): Promise<Server> {
  const bin = join(checkout, 'packages', 'server', 'bin', 'mms.js');
  if (!existsSync(bin)) throw new Error(`${checkout} has no packages/server/bin/mms.js: give the root of a checkout`);
  if (!existsSync(join(checkout, 'node_modules'))) throw new Error(`${checkout} has no node_modules: run npm ci there`);
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [bin, 'serve', '--config', configFile, '--port', String(port), '--log-level', 'warn'],
    // A data folder of its own: a checkout with signing keeps its key there, not in the home folder.
    { cwd: checkout, env: { ...process.env, MMS_DATA_FOLDER: dataFolder }, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  for (let waited = 0; ; waited += 100) {
    if (child.exitCode !== null) throw new Error(`the ${name} server exited with code ${child.exitCode}`);
    if (await healthy(port)) return { name, child, port };
    if (waited > 60_000) throw new Error(`the ${name} server did not answer /health within 60 s`);
    await sleep(100);
  }
}

function healthy(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = request({ host: '127.0.0.1', port, path: '/health' }, (response) => {
      response.resume();
      done(response.statusCode === 200);
    });
    probe.on('error', () => done(false));
    probe.end();
  });
}

/** A streamed request's timings; `onContent` runs when its first content arrives. */
function timedStream(
  port: number,
  model: string,
  text: string,
  maxTokens: number,
  onContent?: () => void,
): Promise<Timings> {
  const body = JSON.stringify({
    model,
    max_tokens: maxTokens,
    stream: true,
    messages: [{ role: 'user', content: text }],
  });
  return new Promise((done, fail) => {
    const started = performance.now();
    const since = () => performance.now() - started;
    const timings: Partial<Timings> = {};
    const outgoing = request({ host: '127.0.0.1', port, path: '/v1/messages', method: 'POST', headers: HEADERS });
    outgoing.on('response', (response) => {
      timings.headers = since();
      if (response.statusCode !== 200) fail(new Error(`answered ${response.statusCode}`));
      let seen = '';
      response.setEncoding('utf8');
      response.on('data', (piece: string) => {
        timings.firstByte ??= since();
        seen += piece;
        if (timings.messageStart === undefined && seen.includes('event: message_start')) timings.messageStart = since();
        if (timings.firstContent === undefined && seen.includes('event: content_block_delta')) {
          timings.firstContent = since();
          onContent?.();
        }
      });
      response.on('end', () => {
        if (!seen.includes('event: message_stop'))
          fail(new Error(`a stream without message_stop: ${seen.slice(-300)}`));
        done(timings as Timings);
      });
    });
    outgoing.on('error', fail);
    outgoing.end(body);
  });
}

/** A lone request to the engine that takes `prefillMs` before its first token. */
function prefill(server: Server): Promise<Timings> {
  return timedStream(server.port, PREFILL_MODEL, 'One word.', 16);
}

/** A request sent once another holds the one slot, so that it waits for the other's whole reply. */
async function queued(server: Server): Promise<Timings> {
  const words = Array.from({ length: settings.blockerTokens }, (_, index) => `w${index}`).join(' ');
  let generating!: () => void;
  const holding = new Promise<void>((resolve) => (generating = resolve));
  const blocker = timedStream(server.port, MODEL_ID, words, settings.blockerTokens, generating);
  await holding;
  const timings = await timedStream(server.port, MODEL_ID, 'One word.', 1);
  await blocker;
  return timings;
}

const thisCheckout = resolve(fileURLToPath(new URL('..', import.meta.url)));
const folder = mkdtempSync(join(tmpdir(), 'mms-early-stream-'));
const engine = await startSlowEngine(settings.prefillMs);
const configFile = join(folder, 'config.json');
const model = { tier: 'mid', generation: 'newer', contextWindow: 8192, maxOutputTokens: 1024 };
writeFileSync(
  configFile,
  JSON.stringify({
    apiKeys: [API_KEY],
    models: [
      {
        id: MODEL_ID,
        ...model,
        backend: { type: 'scripted', tokenDelayMs: settings.tokenDelayMs, concurrency: 1, queue: 4 },
      },
      {
        id: PREFILL_MODEL,
        ...model,
        backend: {
          type: 'openai-compatible',
          engine: 'generic',
          baseURL: engine.baseURL,
          model: ENGINE_MODEL,
          countTokens: 'estimate',
        },
      },
    ],
  }),
);

const checkouts: Array<[string, string]> = [['this checkout', thisCheckout]];
if (values.baseline !== undefined) checkouts.push(['baseline', resolve(values.baseline)]);
const servers: Server[] = [];
try {
  for (const [name, checkout] of checkouts)
    servers.push(await startServer(name, checkout, configFile, join(folder, `data-${servers.length}`)));
  const results = new Map<string, Timings[]>();
  for (let round = 0; round < settings.rounds; round += 1) {
    // Alternated, so that the machine's drift falls on both sides alike.
    for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
      for (const [scenario, run] of [
        ['prefill', prefill],
        ['queued', queued],
      ] as const) {
        const key = `${server.name}\t${scenario}`;
        results.set(key, [...(results.get(key) ?? []), await run(server)]);
      }
    }
  }
  console.log(
    `prefill ${settings.prefillMs} ms; queued behind ${settings.blockerTokens} tokens of ${settings.tokenDelayMs} ms; ${settings.rounds} rounds; ms from sending, median (max)`,
  );
  console.log('| checkout | case | headers | first byte | message_start | first token |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (const [key, runs] of results) {
    const [name, scenario] = key.split('\t');
    const cell = (field: keyof Timings) => {
      const times = runs.map((run) => run[field]);
      return `${median(times).toFixed(1)} (${Math.max(...times).toFixed(1)})`;
    };
    console.log(
      `| ${name} | ${scenario} | ${cell('headers')} | ${cell('firstByte')} | ${cell('messageStart')} | ${cell('firstContent')} |`,
    );
  }
} finally {
  for (const server of servers) {
    server.child.kill('SIGTERM');
    if (server.child.exitCode === null) await once(server.child, 'exit');
  }
  engine.server.close();
  rmSync(folder, { recursive: true, force: true });
}
