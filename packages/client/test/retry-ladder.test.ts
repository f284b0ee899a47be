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
  retryAfterSeconds: undefined,
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

  test("an unreadable 2xx is not the HTTP layer's to retry: the layer above retries it once (issue 32)", () => {
    const unreadable: AttemptOutcome = {
      kind: 'unreadable',
      status: 200,
      detail: "the 200 response's body is unreadable (text/html): no event stream: <html>",
      requestId: 'req_1',
      usage: undefined,
    };
    assert.deepEqual(decideRetry(unreadable, left), {
      retry: false,
      reason: 'an unreadable 2xx is no transport failure: the layer above retries it at most once',
    });
  });

  test('an error event of a retryable status is retried only before any content', () => {
    // The types of 500/502, 529/503, 429 and 504: what an mms stream that opened at admission
    // sends for the failures a JSON reply answers with those statuses.
    for (const type of ['overloaded_error', 'api_error', 'rate_limit_error', 'timeout_error']) {
      assert.deepEqual(decideRetry(streamError(type, true), left), {
        retry: true,
        reason: `an ${type} event came before any content`,
      });
      assert.deepEqual(decideRetry(streamError(type, false), left), {
        retry: false,
        reason: `an ${type} event after content is not retried`,
      });
    }
    for (const type of ['invalid_request_error', 'authentication_error', 'not_found_error', 'request_too_large'])
      assert.equal(decideRetry(streamError(type, true), left).retry, false, type);
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
