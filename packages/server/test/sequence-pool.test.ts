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
import { COPY_MIN_TOKENS, reusablePrefix, SequencePool } from '../src/backends/llama-cpp/sequence-pool.js';

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
    const request = list.forRequest({ requestId: undefined, conversationKey: () => '' });
    const batches = [];
    for await (const batch of request.stream({ step: 0 } as never, new Cancellation())) batches.push(batch);
    assert.equal(request.name, 'spare');
  }
  assert.deepEqual(
    list.memberStates().map((member) => member.circuit),
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

/** A HeldTokens with node-llama-cpp's internal copy: `fail` makes the copy report that it did not take. */
class CopyableTokens extends HeldTokens {
  fail = false;
  copies: Array<{ from: number; count: number }> = [];
  async _copyStateFromOtherSequence(source: HeldTokens, upToTokenIndex: number) {
    this.copies.push({ from: source.id, count: upToTokenIndex });
    if (this.fail) return false;
    this.held = source.held.slice(0, upToTokenIndex);
    return true;
  }
  async clearHistory() {
    this.held = [];
  }
}

function copyableContext(held: number[][]) {
  let made = 0;
  const sequences: CopyableTokens[] = [];
  return {
    sequences,
    get sequencesLeft() {
      return held.length - made;
    },
    getSequence: () => {
      const sequence = new CopyableTokens(made, held[made]);
      sequences.push(sequence);
      made += 1;
      return sequence as unknown as LlamaContextSequence;
    },
  };
}

test('a longer prefix held by another sequence, even a lent one, is copied into the one chosen', async () => {
  const system = range(0, 100);
  const context = copyableContext([[...system, ...range(500, 520)], []]);
  const pool = new SequencePool(context as never);
  const busy = await pool.borrow({ wait: false, signal: live(), tokens: [...system, ...range(500, 530)] });
  assert.equal(idOf(busy), 0);
  // A new conversation under the same system prompt: sequence 1 is empty, sequence 0 is lent.
  const prompt = [...system, ...range(900, 910)];
  const fresh = await pool.borrow({ wait: false, signal: live(), tokens: prompt });
  assert.equal(idOf(fresh), 1);
  assert.deepEqual(context.sequences[1]!.copies, [{ from: 0, count: 100 }]);
  assert.equal(reusablePrefix(fresh, prompt), 100, 'the system prompt is held: only the rest is evaluated');
  assert.equal(context.sequences[0]!.held.length, 120, 'the source keeps what it held');
});

test('a prefix fewer than COPY_MIN_TOKENS longer is evaluated, not copied; a failed copy leaves the sequence empty', async () => {
  const context = copyableContext([range(0, 40), range(0, 20 + COPY_MIN_TOKENS - 1), []]);
  const pool = new SequencePool(context as never);
  const first = await pool.borrow({ wait: false, signal: live(), tokens: range(0, 500) });
  assert.equal(idOf(first), 1, 'the longest prefix: 51 tokens');
  // Sequence 0 holds 40 of the prompt, the lent sequence 1 holds 51: 11 more is not worth a copy.
  const second = await pool.borrow({ wait: false, signal: live(), tokens: range(0, 500) });
  assert.equal(idOf(second), 0);
  assert.deepEqual(context.sequences[0]!.copies, []);
  context.sequences[2]!.fail = true;
  const third = await pool.borrow({ wait: false, signal: live(), tokens: range(0, 500) });
  assert.equal(idOf(third), 2);
  assert.equal(context.sequences[2]!.copies.length, 1);
  assert.equal(context.sequences[2]!.held.length, 0);
});

test('a pool that evaluates every prompt whole copies nothing', async () => {
  const context = copyableContext([range(0, 100), []]);
  const pool = new SequencePool(context as never, undefined, false);
  await pool.borrow({ wait: false, signal: live(), tokens: range(0, 200) });
  await pool.borrow({ wait: false, signal: live(), tokens: range(0, 200) });
  assert.deepEqual(context.sequences[1]!.copies, []);
});
