/**
 * The `anthropic-ratelimit-*` headers, as the original API sends them on its replies, successes
 * and 429s alike: for requests, input tokens and output tokens, each `-limit`, `-remaining` and
 * `-reset` (when the bucket is full again, RFC 3339, to the second). Only for the limits the key has.
 */
import type { BucketName, BucketReading } from './token-bucket.js';

const HEADER_NAMES: Readonly<Record<BucketName, string>> = {
  requests: 'anthropic-ratelimit-requests',
  inputTokens: 'anthropic-ratelimit-input-tokens',
  outputTokens: 'anthropic-ratelimit-output-tokens',
};

export function rateLimitHeaders(readings: Partial<Record<BucketName, BucketReading>>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const bucket of Object.keys(readings) as BucketName[]) {
    const reading = readings[bucket]!;
    const name = HEADER_NAMES[bucket];
    headers[`${name}-limit`] = String(reading.limit);
    headers[`${name}-remaining`] = String(reading.remaining);
    headers[`${name}-reset`] = rfc3339Seconds(reading.fullAt);
  }
  return headers;
}

/** `2026-05-01T12:00:03Z`: rounded up, so that a client waiting until then finds the bucket full. */
function rfc3339Seconds(epochMilliseconds: number): string {
  return new Date(Math.ceil(epochMilliseconds / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
