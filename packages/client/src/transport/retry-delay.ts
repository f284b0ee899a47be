/**
 * How long to wait before an HTTP retry: the service's `retry-after-ms`, else its `retry-after`
 * (seconds or an HTTP date; for an error event, the `retry-after` the event carries), else
 * exponential backoff with full jitter (a uniform draw below a ceiling that doubles per retry).
 * Then cut to the deadline: a wait that would leave no time for the attempt is not taken at all.
 */
import type { BackoffOptions } from '../client-options.js';
import type { AttemptOutcome } from './stream-attempt.js';

export interface Delay {
  delayMs: number;
  source: 'retry-after-ms' | 'retry-after' | 'backoff';
}

/** Less than this left after the wait, and an attempt cannot do anything useful. */
export const MIN_ATTEMPT_MS = 50;

/** `retryIndex` is 0 for the first retry. */
export function retryDelay(
  outcome: AttemptOutcome,
  retryIndex: number,
  backoff: Required<BackoffOptions>,
  random: () => number,
  now: number = Date.now(),
): Delay {
  const headers = outcome.kind === 'status' || outcome.kind === 'stream-error' ? outcome.headers : undefined;
  const fromHeaders = headers ? serverDelay(headers, now) : undefined;
  if (fromHeaders) return fromHeaders;
  // An error event comes after a 200's headers: the wait its status would have sent rides in it.
  if (outcome.kind === 'stream-error' && outcome.retryAfterSeconds !== undefined)
    return { delayMs: outcome.retryAfterSeconds * 1000, source: 'retry-after' };
  return { delayMs: random() * backoffCeilingMs(retryIndex, backoff), source: 'backoff' };
}

/** The full-jitter ceiling of retry `retryIndex`: initial x 2^index, at most the maximum. */
export function backoffCeilingMs(retryIndex: number, backoff: Required<BackoffOptions>): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** retryIndex);
}

function serverDelay(headers: Headers, now: number): Delay | undefined {
  const milliseconds = parseNonNegative(headers.get('retry-after-ms'));
  if (milliseconds !== undefined) return { delayMs: milliseconds, source: 'retry-after-ms' };
  const retryAfter = headers.get('retry-after');
  if (retryAfter === null) return undefined;
  const seconds = parseNonNegative(retryAfter);
  if (seconds !== undefined) return { delayMs: seconds * 1000, source: 'retry-after' };
  // An HTTP date starts with the day's name (RFC 9110, 5.6.7); anything else is no date.
  const date = /^[A-Za-z]{3},/.test(retryAfter.trim()) ? Date.parse(retryAfter) : Number.NaN;
  if (!Number.isNaN(date)) return { delayMs: Math.max(0, date - now), source: 'retry-after' };
  return undefined;
}

function parseNonNegative(text: string | null): number | undefined {
  if (text === null || text.trim() === '') return undefined;
  const value = Number(text);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * The wait cut to the deadline: undefined when waiting would leave less than MIN_ATTEMPT_MS
 * for the attempt, so the caller hears now rather than at its deadline.
 */
export function clampToDeadline(delayMs: number, leftMs: number): number | undefined {
  return delayMs + MIN_ATTEMPT_MS <= leftMs ? delayMs : undefined;
}
