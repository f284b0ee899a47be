import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attemptTimers, Deadline, reserveMs } from '@mms/client';

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
  assert.deepEqual(attemptTimers(120_000, timeouts), { deadlineMs: 120_000, connectMs: 60_000, firstEventMs: 30_000, idleMs: 10_000 });
  assert.deepEqual(attemptTimers(20_000, timeouts), { deadlineMs: 20_000, connectMs: 20_000, firstEventMs: 20_000, idleMs: 10_000 });
  assert.deepEqual(attemptTimers(5_000, timeouts), { deadlineMs: 5_000, connectMs: 5_000, firstEventMs: 5_000, idleMs: 5_000 });
});
