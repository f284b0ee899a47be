/**
 * What a model's `backends: [...]` list and its `balance` cost a request in CPU (issue 36: at
 * most 20 µs). Four stand-in engines that answer at once, so that nothing but mms's own work is
 * timed: each arm runs requests as the handler does (the list's view of the request, a prompt
 * count, one step read to its end), and the cost is its CPU time per request less that of the
 * same request on one engine with no list. The conversation's key is worked out as a request
 * would have it: by its session header, or by the digest of a Claude Code-shaped prefix (a system
 * prompt of about 12,000 tokens and 20 tools) when it has none.
 *
 *   node --import tsx bench/balance-cost.ts [--requests 20000] [--rounds 7]
 *
 * The arms take turns, round after round, and each figure is the median of the rounds: on a
 * shared machine a slice of noise lands on every arm alike.
 */
import { parseArgs } from 'node:util';
import type { MessageRequest } from '@model-messages/protocol';
import type { Backend, RequestRouting } from '../packages/server/src/backends/backend.js';
import type { ModelCall } from '../packages/server/src/backends/call/model-call.js';
import { Cancellation } from '../packages/server/src/backends/cancellation.js';
import type { BalancePolicyName } from '../packages/server/src/backends/fallback/balance-config.js';
import { FallbackBackend } from '../packages/server/src/backends/fallback/fallback-backend.js';
import { MessageRouting } from '../packages/server/src/call-builder/conversation-key.js';
import type { StreamPart } from '../packages/server/src/streaming/stream-part.js';
import { positiveInteger } from './command-arguments.js';
import { median } from './statistics.js';

const AIM_MICROSECONDS = 20;
const FINISH: StreamPart[] = [{ type: 'finish', stopReason: 'end_turn', stopSequence: null }];
const STEP = { step: 0 } as ModelCall;

function engine(name: string): Backend {
  return {
    name,
    async *stream() {
      yield FINISH;
    },
    countTokens: async () => 1,
    prepare: async () => name,
    load: async () => {},
    readiness: async () => [{ backend: name, ready: true, state: 'ready' }],
    close: async () => {},
  };
}

/** A Claude Code-shaped first request: a long system prompt, its tools, one user turn. */
function claudeCodeRequest(conversation: number): MessageRequest {
  return {
    model: 'pool',
    max_tokens: 4096,
    system: `You are Claude Code, conversation ${conversation}. ${'Follow the repository rules and keep edits small. '.repeat(1000)}`,
    tools: Array.from({ length: 20 }, (_, index) => ({
      name: `tool_${index}`,
      description: 'Does one thing. '.repeat(50),
      input_schema: { type: 'object' as const },
    })),
    messages: [{ role: 'user', content: `Fix the failing test number ${conversation}.` }],
  } as MessageRequest;
}

interface Arm {
  name: string;
  /** One request, as the handler runs it. */
  run(index: number): Promise<void>;
}

async function readStep(backend: Backend): Promise<void> {
  await backend.countTokens(STEP, 'admission');
  for await (const batch of backend.stream(STEP, new Cancellation())) void batch;
}

function arms(): Arm[] {
  const single = engine('vllm');
  const list = (balance: BalancePolicyName) =>
    new FallbackBackend(
      ['a', 'b', 'c', 'd'].map((name) => engine(`vllm-${name}`)),
      {
        failureThreshold: 3,
        cooldownMs: 30_000,
        balance,
        loadEpsilon: balance === 'session' ? 0.25 : undefined,
        identities: ['a', 'b', 'c', 'd'].map((name) => `http://engine-${name}:8000/v1`),
      },
    );
  const requests = Array.from({ length: 64 }, (_, index) => claudeCodeRequest(index));
  // A fresh routing per request, as each request has its own: the key is worked out each time.
  const byHeader = (index: number): RequestRouting =>
    new MessageRouting(undefined, `session-${index % 64}`, requests[index % 64]!);
  const byPrefix = (index: number): RequestRouting => new MessageRouting(undefined, undefined, requests[index % 64]!);
  const failover = list('failover');
  const roundRobin = list('round-robin');
  const leastBusy = list('least-busy');
  const session = list('session');
  return [
    { name: 'one engine, no list (baseline)', run: () => readStep(single) },
    { name: 'failover', run: (index) => readStep(failover.forRequest(byHeader(index))) },
    { name: 'round-robin', run: (index) => readStep(roundRobin.forRequest(byHeader(index))) },
    { name: 'least-busy', run: (index) => readStep(leastBusy.forRequest(byHeader(index))) },
    { name: 'session, by header', run: (index) => readStep(session.forRequest(byHeader(index))) },
    { name: 'session, by prefix digest', run: (index) => readStep(session.forRequest(byPrefix(index))) },
  ];
}

function cpuMicroseconds(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { requests: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' } },
  });
  const requests = positiveInteger(values.requests, 'requests');
  const rounds = positiveInteger(values.rounds, 'rounds');
  const all = arms();
  for (const arm of all) for (let index = 0; index < 2000; index += 1) await arm.run(index);
  const samples = new Map<string, number[]>(all.map((arm) => [arm.name, []]));
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? all : [...all].reverse();
    for (const arm of order) {
      const before = cpuMicroseconds();
      for (let index = 0; index < requests; index += 1) await arm.run(index);
      samples.get(arm.name)!.push((cpuMicroseconds() - before) / requests);
    }
  }
  const baseline = median(samples.get(all[0]!.name)!);
  console.log(`node ${process.version}; ${requests} requests an arm, medians of ${rounds} rounds`);
  console.log('');
  console.log('| arm | CPU / request | added by the list |');
  console.log('| --- | ---: | ---: |');
  for (const arm of all) {
    const cost = median(samples.get(arm.name)!);
    const added = arm === all[0] ? 'baseline' : `${(cost - baseline).toFixed(2)} µs`;
    console.log(`| ${arm.name} | ${cost.toFixed(2)} µs | ${added} |`);
  }
  const worst = Math.max(...all.slice(1).map((arm) => median(samples.get(arm.name)!) - baseline));
  console.log('');
  console.log(
    `the most a list adds: ${worst.toFixed(2)} µs a request (aim: at most ${AIM_MICROSECONDS} µs: ${worst <= AIM_MICROSECONDS ? 'met' : 'NOT met'})`,
  );
}

await main();
