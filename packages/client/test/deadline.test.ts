import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientConfigError } from '@model-messages/client';
import { attemptTimers, Deadline, reserveMs } from '../src/deadline.js';
import type { DeadlineInput } from '../src/deadline.js';

test('the client stops before the caller: 10% of the time, between 50 ms and 2 s', () => {
  assert.equal(reserveMs(1_000), 100);
  assert.equal(reserveMs(100), 50);
  assert.equal(reserveMs(600_000), 2_000);
});

test('a deadline from timeoutMs or an absolute time, read against the clock', () => {
  let now = 1_000_000;
  const clock = () => now;
  const relative = Deadline.from({ timeoutMs: 10_000 }, 60_000, clock);
  assert.equal(relative.callerEnd, 1_010_000);
  assert.equal(relative.leftMs(), 9_000);
  const absolute = Deadline.from({ deadline: new Date(1_002_000), timeoutMs: 99 }, 60_000, clock);
  assert.equal(absolute.callerEnd, 1_002_000);
  assert.equal(Deadline.from({}, 60_000, clock).callerEnd, 1_060_000, 'the client default');
  now += 8_500;
  assert.equal(relative.leftMs(), 500);
  now += 5_000;
  assert.equal(relative.leftMs(), 0);
});

test('every transport timer is cut to the time left', () => {
  const timeouts = { connectMs: 60_000, firstEventMs: 30_000, idleMs: 10_000 };
  assert.deepEqual(attemptTimers(120_000, timeouts), {
    deadlineMs: 120_000,
    connectMs: 60_000,
    firstEventMs: 30_000,
    idleMs: 10_000,
  });
  assert.deepEqual(attemptTimers(20_000, timeouts), {
    deadlineMs: 20_000,
    connectMs: 20_000,
    firstEventMs: 20_000,
    idleMs: 10_000,
  });
  assert.deepEqual(attemptTimers(5_000, timeouts), {
    deadlineMs: 5_000,
    connectMs: 5_000,
    firstEventMs: 5_000,
    idleMs: 5_000,
  });
});

test('a deadline or timeout that is no time is refused, naming it, not read as the epoch', () => {
  const refused = (input: Record<string, unknown>, message: RegExp) =>
    assert.throws(
      () => Deadline.from(input as DeadlineInput, 60_000),
      (error: unknown) => error instanceof ClientConfigError && message.test(error.message),
    );
  refused({ deadline: null }, /^deadline: must be a Date or epoch milliseconds, got null$/);
  refused({ deadline: new Date('not a date') }, /got Invalid Date/);
  refused({ deadline: Number.NaN }, /got NaN/);
  refused({ deadline: '2100-01-01' }, /got "2100-01-01"/);
  refused({ deadline: {} }, /^deadline: must be a Date/);
  refused({ timeoutMs: Number.NaN }, /^timeoutMs: must be a positive number, got NaN$/);
  refused({ timeoutMs: -5 }, /got -5/);
  refused({ timeoutMs: '5000' }, /got "5000"/);
  // A past deadline is still a time: the call reports a timeout rather than throwing.
  assert.equal(Deadline.from({ deadline: 0 }, 60_000).leftMs(), 0);
});
