/**
 * The usage history the console charts (issue 37): requests and tokens per key id and model, in
 * buckets of a minute, an hour and a day, kept where the limits are (the data folder's database
 * on one instance, Redis across replicas), so that it outlives a restart and adds up across
 * replicas. Each replica writes what it counted since its last write, every few seconds
 * (observability/usage-recorder.ts): nothing is written on a request's path.
 */

/** What the console asks for, and the buckets each is drawn in. */
export const USAGE_RANGES = {
  hour: { span: 'minute', spanMs: 60_000, buckets: 60 },
  day: { span: 'hour', spanMs: 3_600_000, buckets: 24 },
  month: { span: 'day', spanMs: 86_400_000, buckets: 31 },
} as const;

export type UsageRange = keyof typeof USAGE_RANGES;
export type UsageSpan = (typeof USAGE_RANGES)[UsageRange]['span'];

/** Each span's bucket length, and how long its buckets are kept: a little past the range drawn in them. */
export const USAGE_SPANS: ReadonlyArray<{ span: UsageSpan; spanMs: number; keptMs: number }> = [
  { span: 'minute', spanMs: 60_000, keptMs: 2 * 3_600_000 },
  { span: 'hour', spanMs: 3_600_000, keptMs: 2 * 86_400_000 },
  { span: 'day', spanMs: 86_400_000, keptMs: 400 * 86_400_000 },
];

export interface UsageCounts {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
}

export const USAGE_COUNTS: ReadonlyArray<keyof UsageCounts> = [
  'requests',
  'inputTokens',
  'outputTokens',
  'cacheReadInputTokens',
];

/** What one key did with one model, since the last write or within one bucket. */
export interface KeyModelUsage extends UsageCounts {
  keyId: string;
  model: string;
}

export interface UsageBucket extends KeyModelUsage {
  /** When the bucket begins, epoch milliseconds. */
  bucket: number;
}

export interface UsageHistoryStore {
  /** Adds `usage`, counted up to `at`, to the buckets `at` falls in. */
  add(at: number, usage: readonly KeyModelUsage[]): Promise<void>;
  /** The buckets of `range` up to `now` that hold any usage, oldest first. */
  read(range: UsageRange, now: number): Promise<UsageBucket[]>;
}

/** The first bucket `range` draws, up to `now`. */
export function firstBucket(range: UsageRange, now: number): number {
  const { spanMs, buckets } = USAGE_RANGES[range];
  return bucketOf(now, spanMs) - (buckets - 1) * spanMs;
}

export function bucketOf(at: number, spanMs: number): number {
  return Math.floor(at / spanMs) * spanMs;
}
