import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TIMER_DELAY_MS, setLongTimeout } from '../src/transport/long-timer.js';

// Node sets a longer delay to 1 ms (TimeoutOverflowWarning); the long timer must step instead.
test("a delay past Node's timer range fires once the whole delay has passed, not at the step", (context) => {
  context.mock.timers.enable({ apis: ['setTimeout'] });
  const fired = mock.fn();
  setLongTimeout(fired, 2 * MAX_TIMER_DELAY_MS + 1_000);
  context.mock.timers.tick(MAX_TIMER_DELAY_MS);
  context.mock.timers.tick(MAX_TIMER_DELAY_MS);
  assert.equal(fired.mock.callCount(), 0, 'two full steps are not the whole delay');
  context.mock.timers.tick(999);
  assert.equal(fired.mock.callCount(), 0);
  context.mock.timers.tick(1);
  assert.equal(fired.mock.callCount(), 1);
});

test('a long timer cleared between steps never fires', (context) => {
  context.mock.timers.enable({ apis: ['setTimeout'] });
  const fired = mock.fn();
  const timer = setLongTimeout(fired, MAX_TIMER_DELAY_MS + 10);
  context.mock.timers.tick(MAX_TIMER_DELAY_MS);
  timer.clear();
  context.mock.timers.tick(10);
  assert.equal(fired.mock.callCount(), 0);
});
