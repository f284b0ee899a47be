/**
 * The limits' arithmetic, as the original API describes its own: a token bucket per limit whose
 * capacity is the per-minute limit and which refills continuously, so that a key may spend a
 * whole minute's worth at once and then one unit per `60 s / limit`. Sliding windows were the
 * other choice; a bucket needs one number of state per limit (no log of requests), answers
 * `retry-after` and `reset` exactly, and has no edge where two windows' worth pass at once.
 *
 * A bucket is kept as the time at which it is full again (GCRA's "theoretical arrival time"):
 * at or before now it is full; each unit spent moves it `60 s / limit` later; a request fits
 * while that time stays within one minute from now. The Redis store runs the same rules in its
 * script (redis-scripts.ts); the memory store runs these functions.
 *
 * What is charged when: a request, 1 from the requests bucket and its counted input tokens from
 * the input bucket, both at admission; output tokens once the reply ends, what was generated
 * (issue 20). So admission asks the output bucket only for room for one token, and a reply that
 * generates more than was left puts the bucket in debt, which later requests wait out.
 */
import type { KeyLimits } from '../keys/client-key.js';
import type { QuotaReadings } from './quota-counter.js';
import type { QuotaName } from './quota-period.js';

/** Every bucket is per minute (the quotas, per day and month, are quota-counter.ts's). */
export const WINDOW_MS = 60_000;

/** The limits in the order the store keeps them. */
export const BUCKETS = ['requests', 'inputTokens', 'outputTokens'] as const;
export type BucketName = (typeof BUCKETS)[number];
/** What refused a request: a bucket, the key's requests in flight, or a quota (issue 37). */
export type LimitName = BucketName | 'concurrent' | QuotaName;

/** The limit each bucket has, by the key's config. */
export const BUCKET_LIMITS: Readonly<Record<BucketName, keyof KeyLimits>> = {
  requests: 'requestsPerMinute',
  inputTokens: 'inputTokensPerMinute',
  outputTokens: 'outputTokensPerMinute',
};

/** How long a request refused by a full concurrency limit is told to wait: when a slot frees is unknown. */
export const CONCURRENT_RETRY_MS = 1_000;

/** One bucket as a reply's headers tell it. */
export interface BucketReading {
  limit: number;
  remaining: number;
  /** When it is full again, epoch milliseconds. */
  fullAt: number;
}

export interface Admission extends Refusal {
  /** The buckets after the charge (or as they stand, when refused); only those the key has. */
  readings: Partial<Record<BucketName, BucketReading>>;
  /** The quotas likewise (issue 37). */
  quotas: QuotaReadings;
  /** What settling needs to give the request's place in flight back: the Redis store's lease id. */
  lease: string | undefined;
}

/** The state of one key: each bucket's full-again time, and its requests in flight. */
export interface KeyState {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  inFlight: number;
}

export function emptyKeyState(): KeyState {
  return { requests: 0, inputTokens: 0, outputTokens: 0, inFlight: 0 };
}

/** What refuses a request, and how long until it would fit; `refusedBy` undefined when nothing does. */
export interface Refusal {
  refusedBy: LimitName | undefined;
  /** Undefined when it never would fit (its input alone is over a limit). */
  retryAfterMs: number | undefined;
}

export const NO_REFUSAL: Refusal = { refusedBy: undefined, retryAfterMs: 0 };

/** The bucket that refuses the request now, the longest wait first; changes nothing. */
export function bucketRefusal(state: KeyState, limits: KeyLimits, inputTokens: number, now: number): Refusal {
  let refusal = NO_REFUSAL;
  for (const bucket of BUCKETS) {
    const limit = limits[BUCKET_LIMITS[bucket]];
    if (limit === undefined) continue;
    const needed = bucketNeed(bucket, bucketAmount(bucket, inputTokens), limit);
    const over = Math.max(state[bucket], now) + needed - now - WINDOW_MS;
    refusal = longerWait(refusal, {
      refusedBy: needed > WINDOW_MS || over > 0 ? bucket : undefined,
      retryAfterMs: needed > WINDOW_MS ? undefined : over,
    });
  }
  return refusal;
}

/**
 * Of two refusals, the one a client must wait out: one that never fits wins, then the longer
 * wait; no refusal loses to any.
 */
export function longerWait(first: Refusal, second: Refusal): Refusal {
  if (first.refusedBy === undefined) return second;
  if (second.refusedBy === undefined || first.retryAfterMs === undefined) return first;
  if (second.retryAfterMs === undefined || second.retryAfterMs > first.retryAfterMs) return second;
  return first;
}

/** Charges every bucket of the key for an admitted request. */
export function chargeBuckets(state: KeyState, limits: KeyLimits, inputTokens: number, now: number): void {
  for (const bucket of BUCKETS) {
    const limit = limits[BUCKET_LIMITS[bucket]];
    if (limit !== undefined)
      state[bucket] = Math.max(state[bucket], now) + (bucketAmount(bucket, inputTokens) * WINDOW_MS) / limit;
  }
}

/** What an admission charges each bucket: a request, its input tokens, and output later. */
function bucketAmount(bucket: BucketName, inputTokens: number): number {
  return bucket === 'requests' ? 1 : bucket === 'inputTokens' ? inputTokens : 0;
}

/**
 * Takes back the charge of an admission that did not stand (the shared store refused the request,
 * or failed under `"refuse"`). Charges add up, so taking one away leaves what the others charged;
 * a bucket is never given more room than full.
 */
export function refundRequest(state: KeyState, limits: KeyLimits, inputTokens: number, now: number): void {
  for (const bucket of BUCKETS) {
    const limit = limits[BUCKET_LIMITS[bucket]];
    if (limit !== undefined)
      state[bucket] = Math.max(state[bucket] - (bucketAmount(bucket, inputTokens) * WINDOW_MS) / limit, now);
  }
}

/**
 * A request of the key begins (its first byte): refused when the key's requests in flight are at
 * its concurrency limit, else counted until `leaveRequest`.
 */
export function enterRequest(state: KeyState, limits: KeyLimits): boolean {
  if (limits.concurrent === undefined) return true;
  if (state.inFlight >= limits.concurrent) return false;
  state.inFlight += 1;
  return true;
}

export function leaveRequest(state: KeyState, limits: KeyLimits): void {
  if (limits.concurrent !== undefined) state.inFlight = Math.max(0, state.inFlight - 1);
}

/** The reply ended: its output tokens are charged. */
export function settleRequest(state: KeyState, limits: KeyLimits, outputTokens: number, now: number): void {
  const limit = limits.outputTokensPerMinute;
  if (limit !== undefined && outputTokens > 0)
    state.outputTokens = Math.max(state.outputTokens, now) + (outputTokens * WINDOW_MS) / limit;
}

/** The bucket's time a request needs: the output bucket needs room for one token, charged later. */
export function bucketNeed(bucket: BucketName, amount: number, limit: number): number {
  return ((bucket === 'outputTokens' ? 1 : amount) * WINDOW_MS) / limit;
}

/** Each bucket the key has, read from its full-again times. */
export function readAll(
  fullAt: Readonly<Record<BucketName, number>>,
  limits: KeyLimits,
  now: number,
): Partial<Record<BucketName, BucketReading>> {
  const readings: Partial<Record<BucketName, BucketReading>> = {};
  for (const bucket of BUCKETS) {
    const limit = limits[BUCKET_LIMITS[bucket]];
    if (limit !== undefined) readings[bucket] = reading(limit, fullAt[bucket], now);
  }
  return readings;
}

function reading(limit: number, fullAt: number, now: number): BucketReading {
  const spent = Math.max(0, fullAt - now);
  // A hair of slack: 0.3 ms a token does not divide a minute exactly in floating point.
  const remaining = Math.floor(((WINDOW_MS - spent) * limit) / WINDOW_MS + 1e-6);
  return { limit, remaining: Math.max(0, remaining), fullAt: Math.max(fullAt, now) };
}
