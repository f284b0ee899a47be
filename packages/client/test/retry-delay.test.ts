import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffCeilingMs, clampToDeadline, MIN_ATTEMPT_MS, retryDelay } from '../src/transport/retry-delay.js';
import type { AttemptOutcome } from '../src/transport/stream-attempt.js';

const backoff = { initialMs: 500, maxMs: 8_000 };
const status = (headers: Record<string, string>): AttemptOutcome => ({
  kind: 'status',
  status: 529,
  headers: new Headers(headers),
  errorType: 'overloaded_error',
  errorMessage: 'x',
  requestId: undefined,
});
const noHeaders = status({});

test('retry-after-ms comes first, then retry-after in seconds', () => {
  assert.deepEqual(
    retryDelay(status({ 'retry-after-ms': '250', 'retry-after': '3' }), 0, backoff, () => 0.5),
    { delayMs: 250, source: 'retry-after-ms' },
  );
  assert.deepEqual(
    retryDelay(status({ 'retry-after': '3' }), 0, backoff, () => 0.5),
    { delayMs: 3_000, source: 'retry-after' },
  );
  assert.deepEqual(
    retryDelay(status({ 'retry-after': '1.5' }), 0, backoff, () => 0.5),
    { delayMs: 1_500, source: 'retry-after' },
  );
});

test('retry-after as an HTTP date is the time until then', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.deepEqual(
    retryDelay(status({ 'retry-after': 'Thu, 01 Jan 2026 00:00:04 GMT' }), 0, backoff, () => 0.5, now),
    { delayMs: 4_000, source: 'retry-after' },
  );
});

test("an error event's own retry-after is the wait, after the headers' and before backoff", () => {
  const event = (retryAfterSeconds: number | undefined, headers: Record<string, string> = {}): AttemptOutcome => ({
    kind: 'stream-error',
    headers: new Headers(headers),
    errorType: 'overloaded_error',
    errorMessage: 'x',
    beforeContent: true,
    retryAfterSeconds,
    requestId: undefined,
    usage: undefined,
  });
  assert.deepEqual(
    retryDelay(event(2), 0, backoff, () => 0.5),
    { delayMs: 2_000, source: 'retry-after' },
  );
  assert.deepEqual(
    retryDelay(event(2, { 'retry-after-ms': '100' }), 0, backoff, () => 0.5),
    {
      delayMs: 100,
      source: 'retry-after-ms',
    },
  );
  assert.equal(retryDelay(event(undefined), 0, backoff, () => 0.5).source, 'backoff');
});

test('unparsable headers fall back to backoff', () => {
  assert.equal(
    retryDelay(status({ 'retry-after-ms': 'soon', 'retry-after': '-1' }), 0, backoff, () => 0.5).source,
    'backoff',
  );
});

test('backoff is full jitter below a ceiling that doubles per retry up to the maximum', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 10].map((index) => backoffCeilingMs(index, backoff)),
    [500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000],
  );
  for (const index of [0, 1, 2, 3, 4, 9]) {
    const ceiling = backoffCeilingMs(index, backoff);
    assert.equal(retryDelay(noHeaders, index, backoff, () => 0).delayMs, 0);
    const highest = retryDelay(noHeaders, index, backoff, () => 0.999_999).delayMs;
    assert.ok(highest < ceiling && highest > ceiling * 0.99, `${highest} just below ${ceiling}`);
  }
  const draws = Array.from({ length: 200 }, () => retryDelay(noHeaders, 2, backoff, Math.random).delayMs);
  assert.ok(
    draws.every((delay) => delay >= 0 && delay < 2_000),
    'draws.every((delay) => delay >= 0 && delay < 2_000)',
  );
});

test('a wait that leaves no time for the attempt is not taken', () => {
  assert.equal(clampToDeadline(1_000, 5_000), 1_000);
  assert.equal(clampToDeadline(1_000, 1_000 + MIN_ATTEMPT_MS), 1_000);
  assert.equal(clampToDeadline(1_000, 1_000), undefined);
  assert.equal(clampToDeadline(30_000, 2_000), undefined);
});
