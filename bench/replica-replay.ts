/**
 * Replay benchmark of issue 36: many engine replicas behind one model. Four fake engine
 * replicas that behave like prefix-caching engines (bench/replica-replay/engine-replicas.ts: a
 * cache of 16-token blocks with a fixed capacity, prefill that costs per token not cached, one
 * prompt at a time per replica, `cached_tokens` reported) behind one `mms serve` (the compiled
 * command, bench/mms-serve-process.ts), and 50 Claude Code-shaped conversations of 10 to 30
 * turns arriving interleaved (bench/replica-replay/conversation-trace.ts), replayed once per
 * `balance` policy on the same trace:
 *
 * - the cache hit share: prompt tokens read from the engines' caches, and that share against
 *   the ideal, where each conversation had an engine of its own with room for all of it;
 * - time to first token, p50 and p95, at the client;
 * - the most loaded replica against the mean: by requests served, and by requests in flight over
 *   the run (what bounded load bounds);
 * - the same run with one replica killed once half of the requests are sent: its hit share,
 *   p95, the streams cut mid-reply (sent again by the client), and failures before any output
 *   (which the list must never let through).
 *
 *   node --import tsx bench/replica-replay.ts [--conversations 50] [--rounds 1]
 *        [--policies failover,round-robin,least-busy,session] [--capacity-tokens 400000]
 *        [--prefill-microseconds 2] [--think-ms 50,400] [--seed 36]
 *
 * Time runs about twenty times faster than on a real engine (2 µs of prefill a token, where an
 * 8B model on one H100 takes 30 to 50), so that a run takes seconds; the ratios between policies
 * are what it measures. Rounds run the policies in alternating order, each run on fresh caches
 * and a fresh mms.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BalancePolicyName } from '../packages/server/src/backends/fallback/balance-config.js';
import { positiveInteger, positiveNumber } from './command-arguments.js';
import { startMmsServe } from './mms-serve-process.js';
import { conversationTrace, type Conversation } from './replica-replay/conversation-trace.js';
import {
  ENGINE_MODEL,
  type EngineCommand,
  type EngineSettings,
  type EngineStats,
} from './replica-replay/engine-commands.js';
import { REPLAY_API_KEY, replay, type ReplayOutcome } from './replica-replay/replay-client.js';
import { median, percentile } from './statistics.js';

const POLICIES: readonly BalancePolicyName[] = ['failover', 'round-robin', 'least-busy', 'session'];
/** The replica the lost-replica runs kill: not the first, which failover prefers. */
const KILLED_REPLICA = 1;

function readSettings() {
  const { values } = parseArgs({
    options: {
      conversations: { type: 'string', default: '50' },
      'min-turns': { type: 'string', default: '10' },
      'max-turns': { type: 'string', default: '30' },
      replicas: { type: 'string', default: '4' },
      'capacity-tokens': { type: 'string', default: '400000' },
      'prefill-microseconds': { type: 'string', default: '2' },
      'prefill-overhead-ms': { type: 'string', default: '2' },
      'decode-ms': { type: 'string', default: '0.25' },
      'output-tokens': { type: 'string', default: '64' },
      'stagger-ms': { type: 'string', default: '100' },
      'think-ms': { type: 'string', default: '50,400' },
      rounds: { type: 'string', default: '1' },
      policies: { type: 'string', default: POLICIES.join(',') },
      seed: { type: 'string', default: '36' },
    },
  });
  const policies = values.policies.split(',').map((name) => name.trim());
  for (const policy of policies)
    if (!POLICIES.includes(policy as BalancePolicyName))
      throw new Error(`--policies takes ${POLICIES.join(', ')}, got ${JSON.stringify(policy)}`);
  const [low, high] = values['think-ms'].split(',').map((part) => positiveNumber(part, 'think-ms'));
  return {
    trace: {
      conversations: positiveInteger(values.conversations, 'conversations'),
      minTurns: positiveInteger(values['min-turns'], 'min-turns'),
      maxTurns: positiveInteger(values['max-turns'], 'max-turns'),
      seed: positiveInteger(values.seed, 'seed'),
    },
    engines: {
      replicas: positiveInteger(values.replicas, 'replicas'),
      capacityTokens: positiveInteger(values['capacity-tokens'], 'capacity-tokens'),
      prefillOverheadMs: positiveNumber(values['prefill-overhead-ms'], 'prefill-overhead-ms'),
      prefillMicrosecondsPerToken: positiveNumber(values['prefill-microseconds'], 'prefill-microseconds'),
      decodeMillisecondsPerToken: positiveNumber(values['decode-ms'], 'decode-ms'),
      outputTokens: positiveInteger(values['output-tokens'], 'output-tokens'),
    } satisfies EngineSettings,
    staggerMs: positiveNumber(values['stagger-ms'], 'stagger-ms'),
    thinkMs: { low: low ?? 50, high: high ?? low ?? 400 },
    rounds: positiveInteger(values.rounds, 'rounds'),
    policies: policies as BalancePolicyName[],
  };
}

type Settings = ReturnType<typeof readSettings>;

/** The engine replicas' child process, and a way to ask it one thing at a time. */
class EngineReplicas {
  private constructor(private readonly child: ChildProcess) {}

  static async start(settings: EngineSettings): Promise<{ engines: EngineReplicas; ports: number[] }> {
    const child = fork(fileURLToPath(new URL('./replica-replay/engine-replicas.ts', import.meta.url)), [], {
      execArgv: ['--import', 'tsx'],
      stdio: 'inherit',
    });
    const engines = new EngineReplicas(child);
    const answer = (await engines.ask({ type: 'settings', settings })) as { ports: number[] };
    return { engines, ports: answer.ports };
  }

  async ask(command: EngineCommand): Promise<unknown> {
    const answered = once(this.child, 'message');
    this.child.send(command);
    const [answer] = (await answered) as [unknown];
    return answer;
  }

  async stop(): Promise<void> {
    const exited = once(this.child, 'exit');
    this.child.disconnect();
    await exited;
  }
}

function mmsConfig(policy: BalancePolicyName, ports: readonly number[]): Record<string, unknown> {
  return {
    apiKeys: [REPLAY_API_KEY],
    models: [
      {
        id: 'replay',
        tier: 'large',
        generation: 'newer',
        contextWindow: 262_144,
        maxOutputTokens: 4096,
        balance: policy,
        // The defaults otherwise: the engines' own settings are what users run.
        backends: ports.map((port, index) => ({
          type: 'openai-compatible',
          engine: 'vllm',
          baseURL: `http://127.0.0.1:${port}/v1`,
          model: ENGINE_MODEL,
          ...(index === 0 ? { concurrency: 512, queue: 1024 } : {}),
        })),
      },
    ],
  };
}

interface RunResult {
  policy: BalancePolicyName;
  lost: boolean;
  client: ReplayOutcome;
  engines: EngineStats;
}

async function run(
  policy: BalancePolicyName,
  lost: boolean,
  trace: readonly Conversation[],
  engines: EngineReplicas,
  ports: readonly number[],
  settings: Settings,
): Promise<RunResult> {
  await engines.ask({ type: 'reset' });
  const mms = await startMmsServe(`mms (${policy})`, mmsConfig(policy, ports));
  const total = trace.reduce((sum, conversation) => sum + conversation.requests.length, 0);
  try {
    const client = await replay(trace, mms.port, {
      staggerMs: settings.staggerMs,
      thinkMs: settings.thinkMs,
      seed: settings.trace.seed,
      onSent: (sent) => {
        if (lost && sent === Math.floor(total / 2)) void engines.ask({ type: 'kill', replica: KILLED_REPLICA });
      },
    });
    const { stats } = (await engines.ask({ type: 'stats' })) as { stats: EngineStats };
    return { policy, lost, client, engines: stats };
  } finally {
    await mms.stop();
  }
}

// --- report ------------------------------------------------------------------------------

interface Summary {
  hitShare: number;
  ofIdeal: number;
  p50: number;
  p95: number;
  busiestRequests: number;
  busiestInFlight: number;
  failedBeforeOutput: number;
  cutAfterOutput: number;
  seconds: number;
}

/** The largest value against the mean of the values. */
function busiest(values: readonly number[]): number {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return Math.max(...values) / mean;
}

function summarize(result: RunResult): Summary {
  const engines = result.engines;
  const prompt = engines.replicas.reduce((sum, replica) => sum + replica.promptTokens, 0);
  const cached = engines.replicas.reduce((sum, replica) => sum + replica.cachedTokens, 0);
  const sorted = [...result.client.firstTokenMs].sort((left, right) => left - right);
  // A killed replica's counts stop at its death: the load is compared among those that served on.
  const serving = engines.replicas.filter((_, index) => !result.lost || index !== KILLED_REPLICA);
  return {
    hitShare: cached / prompt,
    ofIdeal: cached / engines.idealCachedTokens,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    busiestRequests: busiest(serving.map((replica) => replica.requests)),
    busiestInFlight: busiest(serving.map((replica) => replica.inFlightSeconds)),
    failedBeforeOutput: result.client.failedBeforeOutput,
    cutAfterOutput: result.client.cutAfterOutput,
    seconds: result.client.seconds,
  };
}

function medianOf(summaries: readonly Summary[], field: keyof Summary): number {
  return median(summaries.map((summary) => summary[field]));
}

function printTables(results: readonly RunResult[], settings: Settings, idealShare: number): void {
  const of = (policy: BalancePolicyName, lost: boolean) =>
    results.filter((result) => result.policy === policy && result.lost === lost).map(summarize);
  console.log('');
  console.log(
    `Ideal (each conversation on an engine of its own): ${(idealShare * 100).toFixed(1)} % of prompt tokens cached. Medians of ${settings.rounds} round(s).`,
  );
  console.log('');
  console.log(
    '| balance | cache hit share | of the ideal | TTFT p50 | TTFT p95 | busiest / mean, requests | busiest / mean, in flight | failed before output | run |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const policy of settings.policies) {
    const steady = of(policy, false);
    console.log(
      `| ${policy} | ${(medianOf(steady, 'hitShare') * 100).toFixed(1)} % | ${medianOf(steady, 'ofIdeal').toFixed(2)} | ` +
        `${medianOf(steady, 'p50').toFixed(0)} ms | ${medianOf(steady, 'p95').toFixed(0)} ms | ${medianOf(steady, 'busiestRequests').toFixed(2)} | ` +
        `${medianOf(steady, 'busiestInFlight').toFixed(2)} | ${medianOf(steady, 'failedBeforeOutput')} | ${medianOf(steady, 'seconds').toFixed(1)} s |`,
    );
  }
  console.log('');
  console.log(
    `With replica ${KILLED_REPLICA + 1} of ${settings.engines.replicas} killed once half of the requests were sent:`,
  );
  console.log('');
  console.log(
    '| balance | of the ideal | TTFT p50 | TTFT p95 | busiest / mean of the rest, requests | streams cut mid-reply | failed before output | run |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const policy of settings.policies) {
    const lost = of(policy, true);
    console.log(
      `| ${policy} | ${medianOf(lost, 'ofIdeal').toFixed(2)} | ${medianOf(lost, 'p50').toFixed(0)} ms | ${medianOf(lost, 'p95').toFixed(0)} ms | ` +
        `${medianOf(lost, 'busiestRequests').toFixed(2)} | ${medianOf(lost, 'cutAfterOutput')} | ${medianOf(lost, 'failedBeforeOutput')} | ${medianOf(lost, 'seconds').toFixed(1)} s |`,
    );
  }
}

// --- main --------------------------------------------------------------------------------

async function main(): Promise<void> {
  const settings = readSettings();
  const trace = conversationTrace(settings.trace);
  const requests = trace.reduce((sum, conversation) => sum + conversation.requests.length, 0);
  const loadBefore = loadavg()[0] ?? Number.NaN;
  console.log(
    `node ${process.version}, ${cpus().length} CPUs, load average ${loadBefore.toFixed(2)}; ${trace.length} conversations, ${requests} requests; ` +
      `${settings.engines.replicas} replicas of ${settings.engines.capacityTokens} cached tokens, prefill ${settings.engines.prefillMicrosecondsPerToken} µs a token`,
  );
  const { engines, ports } = await EngineReplicas.start(settings.engines);
  const results: RunResult[] = [];
  let idealShare = Number.NaN;
  try {
    for (let round = 0; round < settings.rounds; round += 1) {
      const order = round % 2 === 0 ? settings.policies : [...settings.policies].reverse();
      for (const policy of order) {
        for (const lost of [false, true]) {
          const result = await run(policy, lost, trace, engines, ports, settings);
          results.push(result);
          const prompt = result.engines.replicas.reduce((sum, replica) => sum + replica.promptTokens, 0);
          if (!lost) idealShare = result.engines.idealCachedTokens / prompt;
          const summary = summarize(result);
          console.log(
            `round ${round + 1} ${policy.padEnd(11)} ${lost ? 'one lost' : 'steady  '}: hits ${(summary.hitShare * 100).toFixed(1)} % (${summary.ofIdeal.toFixed(2)} of ideal), ` +
              `TTFT p50 ${summary.p50.toFixed(0)} p95 ${summary.p95.toFixed(0)} ms, busiest ${summary.busiestRequests.toFixed(2)} / ${summary.busiestInFlight.toFixed(2)}, ` +
              `cut ${summary.cutAfterOutput}, failed before output ${summary.failedBeforeOutput}, ${summary.seconds.toFixed(1)} s, load ${(loadavg()[0] ?? Number.NaN).toFixed(2)}`,
          );
        }
      }
    }
  } finally {
    await engines.stop();
  }
  printTables(results, settings, idealShare);
  console.log('');
  console.log(`load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] ?? Number.NaN).toFixed(2)} after`);
}

await main();
