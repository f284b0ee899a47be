/**
 * Timers of any length. Node keeps a timer's delay in a signed 32-bit integer: a longer one
 * (over 2^31-1 ms, about 24.8 days) gets a TimeoutOverflowWarning and fires after 1 ms. The
 * client's timers are cut to the time left before the caller's deadline, so a far deadline (a
 * Date years away, a 30-day timeoutMs) would end every call at once. These wait in steps no
 * longer than Node allows and fire only once the whole delay has passed: a later deadline
 * never ends a call sooner (spec, Timeouts).
 */
import { setTimeout as sleepStep } from 'node:timers/promises';

/** The longest delay a Node timer keeps as given. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

export interface LongTimer {
  clear(): void;
}

/** setTimeout for any delay: re-armed in steps until `delayMs` has passed. */
export function setLongTimeout(callback: () => void, delayMs: number): LongTimer {
  let timer: NodeJS.Timeout | undefined;
  const arm = (leftMs: number): void => {
    timer =
      leftMs > MAX_TIMER_DELAY_MS
        ? setTimeout(() => arm(leftMs - MAX_TIMER_DELAY_MS), MAX_TIMER_DELAY_MS)
        : setTimeout(callback, leftMs);
  };
  arm(delayMs);
  return { clear: () => clearTimeout(timer) };
}

/** timers/promises' setTimeout for any delay; rejects like it when `signal` aborts. */
export async function sleepLong(delayMs: number, signal: AbortSignal | undefined): Promise<void> {
  let leftMs = delayMs;
  // At least one step, so a wait of 0 still yields to the event loop as before.
  do {
    const stepMs = Math.min(leftMs, MAX_TIMER_DELAY_MS);
    await sleepStep(stepMs, undefined, { signal });
    leftMs -= stepMs;
  } while (leftMs > 0);
}
