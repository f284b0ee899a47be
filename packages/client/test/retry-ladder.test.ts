import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decideRetry, RETRYABLE_STATUSES } from '../src/transport/retry-ladder.js';
import type { AttemptOutcome } from '../src/transport/stream-attempt.js';

const status = (code: number, headers: Record<string, string> = {}): AttemptOutcome => ({
  kind: 'status',
  status: code,
  headers: new Headers(headers),
  errorType: undefined,
  errorMessage: 'x',
  requestId: 'req_1',
});
const streamError = (errorType: string, beforeContent: boolean): AttemptOutcome => ({
  kind: 'stream-error',
  headers: new Headers(),
  errorType,
  errorMessage: 'x',
  beforeContent,
  requestId: 'req_1',
  usage: undefined,
});
const connection: AttemptOutcome = {
  kind: 'connection',
  phase: 'network',
  detail: 'fetch failed: ECONNREFUSED',
  requestId: undefined,
  usage: undefined,
};
const left = { retriesLeft: 3 };

describe('the retry ladder', () => {
  test('retries exactly the spec statuses: 429, 500, 502, 503, 504, 529', () => {
    assert.deepEqual([...RETRYABLE_STATUSES].sort(), [429, 500, 502, 503, 504, 529]);
    for (const code of RETRYABLE_STATUSES) assert.equal(decideRetry(status(code), left).retry, true, String(code));
    for (const code of [400, 401, 403, 404, 413, 501])
      assert.equal(decideRetry(status(code), left).retry, false, String(code));
  });

  test('x-should-retry overrides the status either way', () => {
    assert.deepEqual(decideRetry(status(400, { 'x-should-retry': 'true' }), left), {
      retry: true,
      reason: 'the service sent x-should-retry: true',
    });
    assert.deepEqual(decideRetry(status(529, { 'x-should-retry': 'false' }), left), {
      retry: false,
      reason: 'the service sent x-should-retry: false',
    });
  });

  test('connection failures are retried', () => {
    assert.equal(decideRetry(connection, left).retry, true);
    assert.equal(
      decideRetry({ kind: 'connection', phase: 'idle', detail: 'stalled', requestId: 'r', usage: undefined }, left)
        .retry,
      true,
    );
  });

  test('an overloaded error event is retried only before any content', () => {
    assert.equal(decideRetry(streamError('overloaded_error', true), left).retry, true);
    assert.deepEqual(decideRetry(streamError('overloaded_error', false), left), {
      retry: false,
      reason: 'an overloaded_error event after content is not retried',
    });
    assert.equal(decideRetry(streamError('api_error', true), left).retry, false);
  });

  test('no retries left, the deadline and the caller stop even a retryable outcome', () => {
    assert.deepEqual(decideRetry(status(529, { 'x-should-retry': 'true' }), { retriesLeft: 0 }), {
      retry: false,
      reason: 'no retries left',
    });
    assert.equal(
      decideRetry({ kind: 'deadline', phase: 'idle', detail: 'x', requestId: undefined, usage: undefined }, left).retry,
      false,
    );
    assert.equal(decideRetry({ kind: 'aborted', reason: new Error('stop'), requestId: undefined }, left).retry, false);
  });
});
