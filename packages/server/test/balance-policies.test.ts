/**
 * How a model's `backends: [...]` shares its requests (issue 36), on stand-in members whose steps
 * the test holds open: the session policy's ring (the same in two processes, spreading keys, and
 * moving only a lost member's keys), its bound on a member's load under a skewed mix, least-busy
 * under replicas of uneven speed (on a clock the test steps), round-robin's turns, and the
 * counts the metrics read.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Backend, RequestRouting } from '../src/backends/backend.js';
import { Cancellation } from '../src/backends/cancellation.js';
import type { ModelCall } from '../src/backends/call/model-call.js';
import type { BalancePolicyName } from '../src/backends/fallback/balance-config.js';
import { FallbackBackend } from '../src/backends/fallback/fallback-backend.js';
import { HashRing, ringHash } from '../src/backends/fallback/hash-ring.js';
import type { StreamPart } from '../src/streaming/stream-part.js';

const FINISH: StreamPart[] = [{ type: 'finish', stopReason: 'end_turn', stopSequence: null }];
const STEP = { step: 0 } as ModelCall;

/** A member whose every step answers at once, `firstOutputMs` on the clock after it began. */
function member(name: string, clock: { now: number }, firstOutputMs = 0): Backend {
  return {
    name,
    async *stream() {
      clock.now += firstOutputMs;
      yield FINISH;
    },
    countTokens: async () => 1,
    prepare: async () => name,
    load: async () => {},
    readiness: async () => [{ backend: name, ready: true, state: 'ready' }],
    close: async () => {},
  };
}

function routing(key: string): RequestRouting {
  return { requestId: undefined, conversationKey: () => key };
}

function list(balance: BalancePolicyName, names: readonly string[], options: { loadEpsilon?: number } = {}) {
  const clock = { now: 0 };
  const backends = names.map((name) => member(name, clock));
  return {
    clock,
    list: new FallbackBackend(backends, {
      failureThreshold: 3,
      cooldownMs: 1000,
      balance,
      loadEpsilon: options.loadEpsilon ?? 0.25,
      identities: names.map((name) => `http://${name}.internal:8000/v1`),
      now: () => clock.now,
    }),
  };
}

/**
 * Starts a request as the handler does, its prompt counted first, and holds its step at its
 * first output: its member counts it in flight.
 */
async function hold(list: FallbackBackend, key: string): Promise<{ answeredBy: string; finish(): Promise<void> }> {
  const request = list.forRequest(routing(key));
  await request.countTokens(STEP, 'admission');
  const step = request.stream(STEP, new Cancellation())[Symbol.asyncIterator]();
  await step.next();
  return {
    answeredBy: request.name,
    finish: async () => {
      while (!(await step.next()).done);
    },
  };
}

/** A whole request, step and all: the name of the member that answered it. */
async function answer(list: FallbackBackend, key = ''): Promise<string> {
  const held = await hold(list, key);
  await held.finish();
  return held.answeredBy;
}

function inFlight(list: FallbackBackend): Record<string, number> {
  return Object.fromEntries(list.memberStates().map((state) => [state.label, state.inFlight]));
}

const FOUR = ['alpha', 'bravo', 'charlie', 'delta'];

describe('the hash ring', () => {
  const identities = FOUR.map((name) => `http://${name}.internal:8000/v1`);
  const keys = Array.from({ length: 4000 }, (_, index) => `session ${index}`);

  test('is the same wherever it is built from the same identities, and hashes strings alike everywhere', () => {
    const one = new HashRing(identities);
    const other = new HashRing([...identities]);
    for (const key of keys.slice(0, 200)) assert.deepEqual(one.walk(key), other.walk(key));
    // Values pinned: a hash that changed between versions of mms would move every conversation
    // while replicas of both versions run side by side in a rolling upgrade.
    assert.equal(ringHash('session 0'), 3185181632);
    assert.equal(ringHash('http://alpha.internal:8000/v1\n0'), 3502954024);
  });

  test('walks every member once, and gives each about a quarter of the keys', () => {
    const ring = new HashRing(identities);
    const owned: number[] = [0, 0, 0, 0];
    for (const key of keys) {
      const walk = ring.walk(key);
      assert.deepEqual([...walk].sort(), [0, 1, 2, 3]);
      owned[walk[0]!] = (owned[walk[0]!] ?? 0) + 1;
    }
    for (const count of owned) assert.ok(count > 700 && count < 1300, `shares ${owned.join(', ')} of 4000 keys`);
  });

  test('a member gone from the ring hands on only its own keys, each to the member after it on the walk', () => {
    const full = new HashRing(identities);
    const without = new HashRing(identities.filter((_, index) => index !== 2));
    // The smaller ring's indexes, mapped back to the full list's.
    const fullIndex = [0, 1, 3];
    let moved = 0;
    for (const key of keys) {
      const walk = full.walk(key);
      const now = fullIndex[without.walk(key)[0]!]!;
      if (walk[0] === 2) {
        moved += 1;
        assert.equal(now, walk[1], `${key} goes to the next member on its walk`);
      } else assert.equal(now, walk[0], `${key} stays`);
    }
    assert.ok(moved > 700, `${moved} keys were the gone member's`);
  });
});

describe('balance "session"', () => {
  test('a conversation goes to the same member every time, and different conversations spread', async () => {
    const { list: sessions } = list('session', FOUR);
    const homes = new Set<string>();
    for (let conversation = 0; conversation < 12; conversation += 1) {
      const key = `session conversation-${conversation}`;
      const first = await answer(sessions, key);
      for (let turn = 0; turn < 4; turn += 1) assert.equal(await answer(sessions, key), first);
      homes.add(first);
    }
    assert.ok(homes.size >= 3, `12 conversations on ${[...homes].join(', ')}`);
  });

  test('bounded load holds under a skewed mix: one conversation sends most of the requests at once', async () => {
    const epsilon = 0.25;
    const { list: sessions } = list('session', FOUR, { loadEpsilon: epsilon });
    const hot = 'session hot';
    const held = [await hold(sessions, hot)];
    const hotHome = held[0]!.answeredBy;
    // 40 steps in flight at once: 30 of the hot conversation, 10 of ten others.
    for (let index = 1; index < 40; index += 1)
      held.push(await hold(sessions, index % 4 === 0 ? `session cold-${index}` : hot));
    const loads = inFlight(sessions);
    const bound = Math.ceil(((1 + epsilon) * 40) / 4);
    for (const [label, load] of Object.entries(loads))
      assert.ok(load <= bound, `${label} holds ${load} of 40, over ${bound}: ${JSON.stringify(loads)}`);
    assert.equal(loads[hotHome], bound, 'the hot conversation fills its own member to the bound first');
    const busy = sessions.memberStates().find((state) => state.label === hotHome)!.skipped.busy;
    assert.ok(busy > 0, 'the requests moved on are counted as passing over a busy member');
    for (const one of held) await one.finish();
    assert.deepEqual(Object.values(inFlight(sessions)), [0, 0, 0, 0], 'each finished step left its count');
  });

  test('without a tight bound the same mix sinks one member', async () => {
    const { list: loose } = list('session', FOUR, { loadEpsilon: 10 });
    for (let index = 0; index < 40; index += 1)
      await hold(loose, index % 4 === 0 ? `session cold-${index}` : 'session hot');
    assert.ok(Math.max(...Object.values(inFlight(loose))) >= 30, JSON.stringify(inFlight(loose)));
  });
});

describe('balance "least-busy"', () => {
  test('a slower replica gets fewer requests: ties go to the faster one, and only load sends one to the slow one', async () => {
    const clock = { now: 0 };
    const replicas = new FallbackBackend([member('engine', clock, 400), member('engine', clock, 20)], {
      failureThreshold: 3,
      cooldownMs: 1000,
      balance: 'least-busy',
      now: () => clock.now,
    });
    // Neither measured yet: each in turn.
    assert.deepEqual([await answer(replicas), await answer(replicas)], ['engine#1', 'engine#2']);
    // One at a time, both idle: the one whose first output came sooner, every time.
    const sequential = [];
    for (let index = 0; index < 6; index += 1) sequential.push(await answer(replicas));
    assert.deepEqual(sequential, Array(6).fill('engine#2'));
    // The fast one busy: the slow one takes the next, then the fast one again once both hold one.
    const first = await hold(replicas, '');
    const second = await hold(replicas, '');
    const third = await hold(replicas, '');
    assert.deepEqual([first.answeredBy, second.answeredBy, third.answeredBy], ['engine#2', 'engine#1', 'engine#2']);
    const states = replicas.memberStates();
    assert.deepEqual(
      states.map((state) => [state.label, state.chosen, state.inFlight]),
      [
        ['engine#1', 2, 1],
        ['engine#2', 9, 2],
      ],
    );
  });
});

describe('balance "round-robin"', () => {
  test('each request starts one member further round', async () => {
    const { list: rotating } = list('round-robin', ['alpha', 'bravo', 'charlie']);
    const answered = [];
    for (let index = 0; index < 6; index += 1) answered.push(await answer(rotating));
    assert.deepEqual(answered, ['alpha', 'bravo', 'charlie', 'alpha', 'bravo', 'charlie']);
  });
});
