/**
 * Gateway benchmark (issue 6): what going through mms adds to a request to an OpenAI-compatible
 * engine, next to calling the engine directly and next to three gateways that do the same job,
 * all on the same fake engine and the same load, in one run. See docs/benchmarks.md.
 *
 *   npm run bench:gateway -- [--duration 5] [--latency-duration 2] [--warmup 1]
 *                            [--connections 32] [--rounds 3] [--modes json,stream] [--no-peers]
 *                            [--engine-chunks apart|together] [--floor-clients]
 *
 * Arms, each a server in a child process of its own (this process is the load generator):
 * - direct: the fake engine itself (bench/gateway/fake-engine.ts), OpenAI chat completions; a
 *   stream's chunks written each on its own, as a real engine sends them (`--engine-chunks
 *   together`: in one piece, as before issue 36);
 * - hop: nginx passing chat completions through (bench/gateway/nginx-hop.ts): what one more hop
 *   costs on this host, the least any gateway adds;
 * - floor: bench/gateway/floor-proxy.ts, the least a Messages gateway in Node does (parse,
 *   translate, undici's dispatch to the engine, the reply or its events; no checks, no log): how
 *   much of what a gateway adds this host charges any of them; floor-json the same, the engine
 *   asked for one JSON reply when the client wants one (mms streams from the engine always);
 *   with --floor-clients, two more that ask the engine with undici's `request` and node:http;
 * - mms: POST /v1/messages, model `bench` on the `openai-compatible` backend -> the engine, with
 *   the default settings (`engine: "vllm"`, `countTokens: "engine"`: no /tokenize round trip for
 *   a prompt far from the window). Every mms arm is `mms serve` from the compiled package, with
 *   its default logging and metrics (bench/mms-serve-process.ts, issue 36): what users run;
 * - mms every-request: the same with `countTokens: "every-request"` (the engine's /tokenize before
 *   every request, as the default did before issue 19);
 * - mms backends: the default settings with `backends: [engine, engine]` (primary healthy);
 * - mms session: `backends: [engine, engine]` with `balance: "session"` (issue 36);
 * - portkey: @portkey-ai/gateway, OpenAI chat completions passthrough to the engine (its
 *   /v1/messages does not translate to chat completions: see bench/gateway/peers.ts);
 * - ccr: @musistudio/claude-code-router, POST /v1/messages -> the engine's chat completions;
 * - litellm: LiteLLM's proxy (Python), POST /v1/messages -> the engine's chat completions.
 * Modes: `json` (non-streaming) and `stream` (`stream: true` on every arm).
 * Each arm's CPU per request is its server process's (and its children's) CPU time over its
 * latency slices, one request at a time (bench/process-cpu.ts).
 *
 * Aim (issues 6, 19 and 36): with the default settings mms adds under 0.3 ms at p50 over direct.
 * Per round: each arm in turn gets a warm-up and then throughput at a fixed number of
 * connections (autocannon), the order alternating from round to round (A B C, C B A, ...); then
 * latency on one keep-alive connection per arm, one request at a time (microsecond timer; what
 * a gateway adds to a request), the arms taking turns in quarter-second slices so that all are
 * measured in the same stretch of time (bench/gateway/measure.ts). The tables are medians of
 * the rounds; an added latency is the median of each round's own difference to direct.
 * The peers are installed on the first run with `npm install --prefix bench/gateway/peers`.
 */
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  LATENCY_SLICE_SECONDS,
  measureMode,
  type Arm,
  type ArmSummary,
  type MeasureSettings,
  type Mode,
} from './gateway/measure.js';
import { API_KEY, chatArm, checkArm, messagesArm, MODEL_ID } from './gateway/arms.js';
import { gatewayConfig, type GatewayLayout } from './gateway/mms-config.js';
import {
  ensureLiteLlmInstalled,
  ensurePeersInstalled,
  portkeyHeaders,
  startClaudeCodeRouter,
  startLiteLlm,
  startPortkey,
  type PeerProcess,
} from './gateway/peers.js';
import { positiveNumber } from './command-arguments.js';
import { forkServer, type ForkedServer } from './child-server.js';
import { startMmsServe } from './mms-serve-process.js';
import { nginxVersion, startNginxHop } from './gateway/nginx-hop.js';

const AIM_ADDED_P50_MS = 0.3;
const PEER_NAMES = ['portkey', 'ccr', 'litellm'];

interface BenchSettings extends MeasureSettings {
  modes: Mode[];
  peers: boolean;
  engineChunks: 'apart' | 'together';
  /** Two more floor arms, which ask the engine with undici's `request` and with node:http. */
  floorClients: boolean;
}

function readSettings(): BenchSettings {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      'latency-duration': { type: 'string', default: '2' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '3' },
      modes: { type: 'string', default: 'json,stream' },
      'no-peers': { type: 'boolean', default: false },
      'engine-chunks': { type: 'string', default: 'apart' },
      'floor-clients': { type: 'boolean', default: false },
    },
  });
  const engineChunks = values['engine-chunks'];
  if (engineChunks !== 'apart' && engineChunks !== 'together')
    throw new Error(`--engine-chunks takes apart or together, got ${JSON.stringify(engineChunks)}`);
  const modes = values.modes.split(',').map((mode) => mode.trim());
  for (const mode of modes)
    if (mode !== 'json' && mode !== 'stream')
      throw new Error(`--modes takes json and/or stream, got ${JSON.stringify(mode)}`);
  return {
    durationSeconds: positiveNumber(values.duration, 'duration'),
    latencySeconds: positiveNumber(values['latency-duration'], 'latency-duration'),
    warmupSeconds: positiveNumber(values.warmup, 'warmup'),
    connections: Math.round(positiveNumber(values.connections, 'connections')),
    rounds: Math.round(positiveNumber(values.rounds, 'rounds')),
    modes: modes as Mode[],
    peers: !values['no-peers'],
    engineChunks,
    floorClients: values['floor-clients'],
  };
}

// --- child processes ---------------------------------------------------------------------

interface Stoppable {
  stop(): Promise<void>;
}

/** A bench/gateway/ server, forked as every bench's child servers are (child-server.ts). */
function forkGatewayServer(name: string, file: string, childArguments: string[]): Promise<ForkedServer> {
  return forkServer(name, fileURLToPath(new URL(file, import.meta.url)), childArguments);
}

// --- report ------------------------------------------------------------------------------

function signed(value: number): string {
  return `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(2)} ms`;
}

function printMode(mode: Mode, summaries: ArmSummary[], settings: BenchSettings): void {
  const direct = summaries.find((summary) => summary.arm.name === 'direct');
  if (direct === undefined) return;
  console.log('');
  console.log(`${mode === 'json' ? 'Non-streaming' : 'Streaming'} (${mode}): medians of ${settings.rounds} rounds`);
  console.log('');
  console.log(
    `| path to the same fake engine | request | added p50 | added p99 | CPU / request | p50, 1 conn | p99, 1 conn | req/s, ${settings.connections} conns | vs direct | p50 / p99 at ${settings.connections} conns |`,
  );
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const summary of summaries) {
    const isDirect = summary === direct;
    console.log(
      `| ${summary.arm.label} | ${summary.arm.request} | ${isDirect ? 'baseline' : signed(summary.addedP50)} | ${isDirect ? 'baseline' : signed(summary.addedP99)} | ` +
        `${(summary.cpuPerRequest / 1000).toFixed(2)} ms${isDirect ? ' (the engine)' : ''} | ${summary.p50.toFixed(3)} ms | ${summary.p99.toFixed(3)} ms | ${summary.requestsPerSecond.toFixed(0)} | ${(summary.requestsPerSecond / direct.requestsPerSecond).toFixed(2)} | ${summary.loadedP50} / ${summary.loadedP99} ms |`,
    );
  }
  const mms = summaries.find((summary) => summary.arm.name === 'mms');
  if (mms === undefined) return;
  const added = mms.addedP50;
  const peers = summaries.filter((summary) => PEER_NAMES.includes(summary.arm.name));
  const beaten = peers.filter((peer) => peer.addedP50 > added);
  console.log('');
  console.log(
    `mms adds ${added.toFixed(2)} ms at p50 (aim: under ${AIM_ADDED_P50_MS} ms: ${added < AIM_ADDED_P50_MS ? 'met' : 'NOT met'}); ` +
      (peers.length === 0
        ? 'no peer measured'
        : `less than ${beaten.length} of ${peers.length} peers measured (${peers.map((peer) => `${peer.arm.name} ${peer.addedP50.toFixed(2)} ms`).join(', ')})`),
  );
  const hop = summaries.find((summary) => summary.arm.name === 'hop');
  if (hop !== undefined)
    console.log(
      `one more hop (nginx passing the bytes through) adds ${hop.addedP50.toFixed(2)} ms at p50 on this host`,
    );
  const floor = summaries.find((summary) => summary.arm.name === 'floor');
  if (floor !== undefined)
    console.log(
      `the floor (the least a Node Messages gateway does) adds ${floor.addedP50.toFixed(2)} ms at p50 and uses ` +
        `${(floor.cpuPerRequest / 1000).toFixed(2)} ms of CPU a request; mms adds ${(added - floor.addedP50).toFixed(2)} ms ` +
        `and ${((mms.cpuPerRequest - floor.cpuPerRequest) / 1000).toFixed(2)} ms of CPU above it`,
    );
}

// --- main --------------------------------------------------------------------------------

async function main(): Promise<void> {
  const settings = readSettings();
  const startedAt = performance.now();
  const started: Stoppable[] = [];
  const stopAll = (): Promise<unknown> => Promise.allSettled(started.splice(0).map((server) => server.stop()));
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const problems: string[] = [];
  try {
    const engine = await forkGatewayServer('fake engine', './gateway/fake-engine.ts', [settings.engineChunks]);
    started.push(engine);
    const engineModel = String(engine.message.model);
    const engineBaseURL = `http://127.0.0.1:${engine.port}/v1`;
    /** A floor arm (bench/gateway/floor-proxy.ts): how it asks the engine, and for what. */
    const floorArm = async (name: string, label: string, client: string, engineReplies = 'stream'): Promise<Arm> => {
      const floor = await forkGatewayServer(label, './gateway/floor-proxy.ts', [
        engineBaseURL,
        engineModel,
        client,
        engineReplies,
      ]);
      started.push(floor);
      return messagesArm(name, label, floor);
    };
    const serve = async (name: string, layout: GatewayLayout, countTokens?: string) => {
      const config = gatewayConfig({
        apiKey: API_KEY,
        modelId: MODEL_ID,
        engineBaseURL,
        engineModel,
        layout,
        countTokens,
      });
      const served = await startMmsServe(name, config);
      started.push(served);
      return served;
    };
    const arms: Arm[] = [
      chatArm('direct', 'direct (no gateway)', engine, engineModel, { authorization: 'Bearer bench-engine-key' }),
      await floorArm('floor', 'floor: the least a Node Messages gateway does (undici dispatch)', 'undici-dispatch'),
      await floorArm('floor-json', 'floor, the engine asked for JSON when the client is', 'undici-dispatch', 'json'),
      ...(settings.floorClients
        ? [
            await floorArm('floor-request', 'floor, undici request', 'undici-request'),
            await floorArm('floor-http', 'floor, node:http request', 'node-http'),
          ]
        : []),
      messagesArm('mms', 'mms, `openai-compatible` backend, default settings', await serve('mms', 'single')),
      messagesArm(
        'mms-every',
        'mms, `countTokens: "every-request"`',
        await serve('mms every-request', 'single', 'every-request'),
      ),
      messagesArm('mms-backends', 'mms, `backends` list (primary healthy)', await serve('mms backends', 'backends')),
      messagesArm('mms-session', 'mms, `backends` list, `balance: "session"`', await serve('mms session', 'session')),
    ];
    try {
      const hop = await startNginxHop(engine.port);
      started.push(hop);
      arms.splice(
        1,
        0,
        chatArm('hop', `one hop: ${nginxVersion()}, passthrough`, hop, engineModel, {
          authorization: 'Bearer bench-engine-key',
        }),
      );
    } catch (error) {
      problems.push(`the one-hop arm (nginx): ${error instanceof Error ? error.message : String(error)}`);
    }
    if (settings.peers) {
      const peers: Array<[string, () => Promise<PeerProcess>, (peer: PeerProcess) => Arm]> = [
        [
          '@portkey-ai/gateway',
          async () => {
            console.log(`peers installed: ${ensurePeersInstalled().join(', ')}`);
            return startPortkey();
          },
          (peer) => chatArm('portkey', '`@portkey-ai/gateway`', peer, engineModel, portkeyHeaders(engineBaseURL)),
        ],
        [
          '@musistudio/claude-code-router',
          () => startClaudeCodeRouter(engineBaseURL, engineModel),
          (peer) => messagesArm('ccr', '`@musistudio/claude-code-router`', peer),
        ],
        [
          'LiteLLM proxy',
          async () => {
            console.log(`peer installed: ${ensureLiteLlmInstalled()}`);
            return startLiteLlm(engineBaseURL, engineModel);
          },
          (peer) => messagesArm('litellm', 'LiteLLM proxy', peer),
        ],
      ];
      for (const [name, start, toArm] of peers) {
        try {
          const peer = await start();
          started.push(peer);
          arms.push(toArm(peer));
        } catch (error) {
          problems.push(`${name} did not start: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
    for (const problem of problems) console.log(`NOT MEASURED: ${problem}`);
    console.log(
      `node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), load average ${loadBefore.toFixed(2)}; engine chunks ${settings.engineChunks}`,
    );
    console.log(
      `per arm and round: ${settings.warmupSeconds} s warm-up and ${settings.durationSeconds} s at ${settings.connections} connections (throughput), ` +
        `then ${settings.latencySeconds} s on 1 connection (latency) in ${LATENCY_SLICE_SECONDS} s slices, the arms taking turns; ${settings.rounds} rounds, alternating order`,
    );
    const summaries = new Map<Mode, ArmSummary[]>();
    for (const mode of settings.modes) {
      const measurable: Arm[] = [];
      for (const arm of arms) {
        try {
          await checkArm(arm, mode);
          measurable.push(arm);
        } catch (error) {
          if (PEER_NAMES.includes(arm.name)) {
            const problem = `${error instanceof Error ? error.message : String(error)}`;
            problems.push(problem);
            console.log(`NOT MEASURED: ${problem}`);
          } else {
            throw error;
          }
        }
      }
      summaries.set(mode, await measureMode(measurable, mode, settings));
    }
    for (const [mode, modeSummaries] of summaries) printMode(mode, modeSummaries, settings);
    console.log('');
    for (const problem of problems) console.log(`not measured: ${problem}`);
    console.log(
      `load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] ?? Number.NaN).toFixed(2)} after; total ${((performance.now() - startedAt) / 1000).toFixed(0)} s`,
    );
  } finally {
    await stopAll();
  }
}

await main();
