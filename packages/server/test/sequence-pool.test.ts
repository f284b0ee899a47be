/** The llama-cpp backend's context sequences: a borrow with none free is a 529, not a crash. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '@mms/protocol';
import type { LlamaContextSequence } from 'node-llama-cpp';
import { isRetryableFailure } from '../src/backends/fallback/fallback-backend.js';
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

test('with every sequence busy, a borrow is a 529 overloaded with retry-after, which a fallback list moves on from', () => {
  const pool = new SequencePool(contextWith(1) as never);
  const first = pool.borrow();
  let refused: unknown;
  try {
    pool.borrow();
  } catch (error) {
    refused = error;
  }
  assert.ok(refused instanceof ServiceError, String(refused));
  assert.deepEqual([refused.code, refused.status, refused.type, refused.retryAfterSeconds], ['overloaded', 529, 'overloaded_error', 1]);
  assert.match(refused.message, /every context sequence of this llama-cpp backend \(1, its concurrency\) is generating/);
  assert.equal(isRetryableFailure(refused), true);
  pool.giveBack(first);
  assert.equal(pool.borrow(), first);
});
