/**
 * The llama-cpp backend's context sequences: each step gets the free one holding the longest
 * prefix of its prompt; a turn's first step is refused when all are busy, a later step waits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '@model-messages/protocol';
import type { LlamaContextSequence, Token } from 'node-llama-cpp';
import { FallbackBackend, isRetryableFailure } from '../src/backends/fallback/fallback-backend.js';
import type { Backend } from '../src/backends/backend.js';
import { Cancellation } from '../src/backends/cancellation.js';
import { reusablePrefix, SequencePool } from '../src/backends/llama-cpp/sequence-pool.js';

/** A sequence holding `held` tokens; only what the pool reads of it, compared as node-llama-cpp compares. */
class HeldTokens {
  constructor(
    readonly id: number,
    public held: number[] = [],
  ) {}
  get nextTokenIndex() {
    return this.held.length;
  }
  compareContextTokens(tokens: readonly number[]) {
    const index = this.held.findIndex((token, at) => token !== tokens[at]);
    return { firstDifferentIndex: index < 0 ? this.held.length : index };
  }
}

/** A context with `count` sequences; only what the pool reads of it. */
function contextWith(count: number, held: number[][] = []) {
  let made = 0;
  return {
    get sequencesLeft() {
      return count - made;
    },
    getSequence: () => {
      const sequence = new HeldTokens(made, held[made]);
      made += 1;
      return sequence as unknown as LlamaContextSequence;
    },
  };
}

const idOf = (sequence: LlamaContextSequence) => (sequence as unknown as HeldTokens).id;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, index) => (from + index) as Token);

const live = () => new AbortController().signal;

test('with every sequence busy, a first step is a 529 overloaded with retry-after, which a fallback list moves on from', async () => {
  const pool = new SequencePool(contextWith(1) as never);
  const first = await pool.borrow({ wait: false, signal: live() });
  const refused = await pool.borrow({ wait: false, signal: live() }).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.ok(refused instanceof ServiceError, String(refused));
  assert.deepEqual(
    [refused.code, refused.status, refused.type, refused.retryAfterSeconds],
    ['overloaded', 529, 'overloaded_error', 1],
  );
  assert.match(
    refused.message,
    /every context sequence of this llama-cpp backend \(1, its concurrency\) is generating/,
  );
  assert.equal(isRetryableFailure(refused), true);
  pool.giveBack(first);
  assert.equal(await pool.borrow({ wait: false, signal: live() }), first);
});

test('a later step of a turn waits for a sequence instead of cutting the reply, and leaves the queue when aborted', async () => {
  const pool = new SequencePool(contextWith(1) as never);
  const held = await pool.borrow({ wait: false, signal: live() });
  const leaving = new AbortController();
  const abandoned = pool.borrow({ wait: true, signal: leaving.signal });
  const waiting = pool.borrow({ wait: true, signal: live() });
  leaving.abort(new Error('client left'));
  await assert.rejects(abandoned, /client left/);
  pool.giveBack(held);
  assert.equal(await waiting, held, 'the sequence goes to the waiter still there');
});

test('a full backend in a fallback list is passed over without its circuit counting a failure', async () => {
  const pool = new SequencePool(contextWith(1) as never);
  await pool.borrow({ wait: false, signal: live() });
  const full: Backend = {
    name: 'full',
    async *stream(step, cancellation) {
      await pool.borrow({ wait: step.step > 0, signal: cancellation.signal });
      yield [];
    },
    countTokens: async () => 1,
    prepare: async () => 'full',
    load: async () => {},
    readiness: async () => [{ backend: 'full', ready: true, state: 'ready' }],
    close: async () => {},
  };
  const spare: Backend = {
    ...full,
    name: 'spare',
    async *stream() {
      yield [{ type: 'finish', stopReason: 'end_turn', stopSequence: null }];
    },
  };
  const list = new FallbackBackend([full, spare], { failureThreshold: 1, cooldownMs: 60_000 });
  for (let round = 0; round < 3; round += 1) {
    const request = list.forRequest();
    const batches = [];
    for await (const batch of request.stream({ step: 0 } as never, new Cancellation())) batches.push(batch);
    assert.equal(request.name, 'spare');
  }
  assert.deepEqual(
    list.circuits().map((circuit) => circuit.state),
    ['closed', 'closed'],
    'with a threshold of 1, a charged failure would have opened it',
  );
});

test('a prompt goes to the free sequence holding the longest prefix of it, never to a lent one', async () => {
  const pool = new SequencePool(contextWith(3, [range(0, 10), range(0, 40), [7, 7, 7]]) as never);
  const prompt = [...range(0, 40), ...range(99, 101)];
  const first = await pool.borrow({ wait: false, signal: live(), tokens: prompt });
  assert.equal(idOf(first), 1);
  const second = await pool.borrow({ wait: false, signal: live(), tokens: prompt });
  assert.equal(idOf(second), 0, 'the longest of those left: 10 shared tokens');
  const third = await pool.borrow({ wait: false, signal: live(), tokens: prompt });
  assert.equal(idOf(third), 2, 'the last one, though it shares nothing');
});

test('the reused prefix leaves the prompt its last token to evaluate', () => {
  const sequence = new HeldTokens(0, range(0, 20)) as unknown as LlamaContextSequence;
  assert.equal(reusablePrefix(sequence, range(0, 30)), 20);
  assert.equal(reusablePrefix(sequence, range(0, 20)), 19, 'a prompt the sequence holds whole');
  assert.equal(reusablePrefix(sequence, [...range(0, 3), ...range(9, 10)]), 3);
  assert.equal(reusablePrefix(sequence, []), 0);
});

test('a prompt sharing little overwrites an empty sequence, then one whose marked prefix survives, then the least recent', async () => {
  const conversation = (start: number) => range(start, start + 100);
  const pool = new SequencePool(contextWith(3, [conversation(0), [], conversation(1000)]) as never);
  const stranger = range(5000, 5100);
  const empty = await pool.borrow({ wait: false, signal: live(), tokens: stranger });
  assert.equal(idOf(empty), 1, 'an empty sequence loses nothing');
  const [a, b] = [
    await pool.borrow({ wait: false, signal: live(), tokens: conversation(0) }),
    await pool.borrow({ wait: false, signal: live(), tokens: conversation(1000) }),
  ];
  assert.deepEqual([idOf(a), idOf(b)], [0, 2]);
  // Sequence 0's prompt had a breakpoint 80 tokens in; sequence 2's none. Both now used, 0 less recently.
  pool.giveBack(a, 80);
  pool.giveBack(b, 0);
  (empty as unknown as HeldTokens).held = range(9000, 9100);
  pool.giveBack(empty, 0);
  const next = await pool.borrow({ wait: false, signal: live(), tokens: range(7000, 7100) });
  assert.equal(idOf(next), 2, 'not 0, whose marked prefix would be lost; of 2 and 1, the less recently used');
  const after = await pool.borrow({ wait: false, signal: live(), tokens: range(7000, 7100) });
  assert.equal(idOf(after), 1);
  const last = await pool.borrow({ wait: false, signal: live(), tokens: range(7000, 7100) });
  assert.equal(idOf(last), 0, 'a marked prefix is overwritten when nothing else is free');
});

test('with more sequences than concurrency, at most concurrency are lent at once', async () => {
  const pool = new SequencePool(contextWith(3) as never, 2);
  await pool.borrow({ wait: false, signal: live() });
  const held = await pool.borrow({ wait: false, signal: live() });
  await assert.rejects(pool.borrow({ wait: false, signal: live() }), /\(2, its concurrency\)/);
  const waiting = pool.borrow({ wait: true, signal: live(), tokens: [] });
  pool.giveBack(held);
  assert.ok(await waiting);
});
