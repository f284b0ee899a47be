/** The llama-cpp backend's context sequences: a turn's first step is refused when all are busy, a later step waits. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '@model-messages/protocol';
import type { LlamaContextSequence } from 'node-llama-cpp';
import { FallbackBackend, isRetryableFailure } from '../src/backends/fallback/fallback-backend.js';
import type { Backend } from '../src/backends/backend.js';
import { Cancellation } from '../src/backends/cancellation.js';
import { SequencePool } from '../src/backends/llama-cpp/sequence-pool.js';

/** A context with `count` sequences; only what the pool reads of it. */
function contextWith(count: number) {
  let left = count;
  return {
    get sequencesLeft() {
      return left;
    },
    getSequence: () => {
      left -= 1;
      return { id: left } as unknown as LlamaContextSequence;
    },
  };
}

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
