/**
 * The `anthropic-ratelimit-*` headers, as the original API sends them on its replies, successes
 * and 429s alike: for requests, input tokens and output tokens, each `-limit`, `-remaining` and
 * `-reset` (when the bucket is full again, RFC 3339, to the second). Only for the limits the key has.
 *
 * The quotas (issue 37) have no header of the original API's, so theirs are the service's own:
 * `mms-quota-tokens-day-{limit,remaining,reset}` and the same for `month`, `reset` being when the
 * period ends and the count starts again.
 */
import type { QuotaReadings } from './quota-counter.js';
import { QUOTAS, type QuotaName } from './quota-period.js';
import { BUCKETS, type BucketName, type BucketReading } from './token-bucket.js';

/** Each bucket's three header names, made once. */
const HEADER_NAMES: Readonly<Record<BucketName, { limit: string; remaining: string; reset: string }>> = {
  requests: headerNames('anthropic-ratelimit-requests'),
  inputTokens: headerNames('anthropic-ratelimit-input-tokens'),
  outputTokens: headerNames('anthropic-ratelimit-output-tokens'),
};

const QUOTA_HEADER_NAMES: Readonly<Record<QuotaName, { limit: string; remaining: string; reset: string }>> = {
  tokensPerDay: headerNames('mms-quota-tokens-day'),
  tokensPerMonth: headerNames('mms-quota-tokens-month'),
};

function headerNames(prefix: string): { limit: string; remaining: string; reset: string } {
  return { limit: `${prefix}-limit`, remaining: `${prefix}-remaining`, reset: `${prefix}-reset` };
}

export function rateLimitHeaders(
  readings: Partial<Record<BucketName, BucketReading>>,
  quotas: QuotaReadings,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const quota of QUOTAS) {
    const reading = quotas[quota];
    if (reading === undefined) continue;
    const names = QUOTA_HEADER_NAMES[quota];
    headers[names.limit] = String(reading.limit);
    headers[names.remaining] = String(reading.remaining);
    headers[names.reset] = periodEnds[quota].format(reading.resetsAt);
  }
  for (const bucket of BUCKETS) {
    const reading = readings[bucket];
    if (reading === undefined) continue;
    const names = HEADER_NAMES[bucket];
    headers[names.limit] = String(reading.limit);
    headers[names.remaining] = String(reading.remaining);
    headers[names.reset] = resetTimes[bucket].format(reading.fullAt);
  }
  return headers;
}

/** `2026-05-01T12:00:03Z`: rounded up, so that a client waiting until then finds the bucket full. */
export function resetText(epochMilliseconds: number): string {
  return `${new Date(Math.ceil(epochMilliseconds / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/**
 * resetText with its last text kept: successive replies mostly name the same second, and every
 * reply of a limited key writes three of these.
 */
class ResetTime {
  private seconds = Number.NaN;
  private text = '';

  format(epochMilliseconds: number): string {
    const seconds = Math.ceil(epochMilliseconds / 1000);
    if (seconds !== this.seconds) {
      this.seconds = seconds;
      this.text = resetText(epochMilliseconds);
    }
    return this.text;
  }
}

const periodEnds: Readonly<Record<QuotaName, ResetTime>> = {
  tokensPerDay: new ResetTime(),
  tokensPerMonth: new ResetTime(),
};

const resetTimes: Readonly<Record<BucketName, ResetTime>> = {
  requests: new ResetTime(),
  inputTokens: new ResetTime(),
  outputTokens: new ResetTime(),
};
