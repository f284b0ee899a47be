/**
 * limits/: the same cases against both stores, the memory store and a real redis-server (skipped,
 * saying why, where none is installed): the requests, input-token and output-token buckets, the
 * requests in flight, what a 429 says, and the headers successes carry.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ServiceError } from '@model-messages/protocol';
import { redisServerMissing, startRedisServer, type RedisServer } from '@model-messages/testing';
import type { KeyLimits } from '../src/keys/client-key.js';
import type { ClientKey } from '../src/keys/client-key.js';
import { KeyLimiter, type LimitCharge } from '../src/limits/key-limiter.js';
import { RedisLimitStore } from '../src/limits/redis-limit-store.js';
import { openDatabase } from '../src/limits/sqlite-database.js';
import { limits } from './key-limiter-support.js';

/** A fresh key id per case, so that the cases share no state in one Redis. */
function freshKey(name: string): string {
  return `${name}-${randomBytes(4).toString('hex')}`;
}

function clientKey(id: string, keyLimits: KeyLimits): ClientKey {
  return { id, limits: keyLimits, models: undefined, admin: false };
}

/** A request's way through the limiter, as the route runs it: entered, then admitted; a refusal settles it. */
async function request(
  limiter: KeyLimiter,
  keyId: string,
  keyLimits: KeyLimits,
  tokens: number,
): Promise<LimitCharge | ServiceError> {
  let charge: LimitCharge | undefined;
  try {
    charge = limiter.enter(clientKey(keyId, keyLimits))!;
    await charge.admit(tokens);
    return charge;
  } catch (error) {
    charge?.settle(0);
    assert.ok(error instanceof ServiceError, `expected a refusal, got ${String(error)}`);
    return error;
  }
}

/** The 429 (or other ServiceError) a request meets; fails when it is admitted. */
async function refusal(
  limiter: KeyLimiter,
  keyId: string,
  keyLimits: KeyLimits,
  tokens: number,
): Promise<ServiceError> {
  const outcome = await request(limiter, keyId, keyLimits, tokens);
  assert.ok(outcome instanceof ServiceError, 'expected a refusal');
  return outcome;
}

async function admitted(limiter: KeyLimiter, keyId: string, keyLimits: KeyLimits, tokens = 0): Promise<LimitCharge> {
  const outcome = await request(limiter, keyId, keyLimits, tokens);
  assert.ok(!(outcome instanceof ServiceError), `refused: ${outcome instanceof ServiceError ? outcome.message : ''}`);
  return outcome;
}

function storeCases(name: string, makeLimiter: () => KeyLimiter, skip: string | undefined): void {
  describe(`${name} store`, { skip }, () => {
    let limiter: KeyLimiter;
    before(() => {
      limiter = makeLimiter();
    });
    after(() => limiter?.close());

    test('a requests limit admits a minute of requests at once, then 429 with retry-after and the headers', async () => {
      const keyId = freshKey('requests');
      const keyLimits = limits({ requestsPerMinute: 3 });
      const remaining = [];
      for (let index = 0; index < 3; index += 1) {
        const charge = await admitted(limiter, keyId, keyLimits);
        remaining.push(charge.headers['anthropic-ratelimit-requests-remaining']);
        assert.equal(charge.headers['anthropic-ratelimit-requests-limit'], '3');
        assert.equal(charge.headers['anthropic-ratelimit-input-tokens-limit'], undefined);
        charge.settle(0);
      }
      assert.deepEqual(remaining, ['2', '1', '0']);
      const error = await refusal(limiter, keyId, keyLimits, 0);
      assert.equal(error.code, 'rate_limited');
      assert.equal(error.status, 429);
      assert.equal(error.type, 'rate_limit_error');
      assert.match(error.message, /limit of 3 requests per minute is reached/);
      // One request refills in 20 s: the wait is at most that, rounded up to whole seconds.
      assert.ok(error.retryAfterSeconds! >= 19 && error.retryAfterSeconds! <= 20, String(error.retryAfterSeconds));
      assert.equal(error.headers?.['anthropic-ratelimit-requests-remaining'], '0');
      const reset = error.headers?.['anthropic-ratelimit-requests-reset'];
      assert.match(reset ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const resetIn = Date.parse(reset!) - Date.now();
      assert.ok(resetIn > 50_000 && resetIn <= 61_000, `reset in ${resetIn} ms`);
    });

    test('input tokens are charged from the count; a prompt over the whole limit is refused with no retry-after', async () => {
      const keyId = freshKey('input');
      const keyLimits = limits({ inputTokensPerMinute: 100 });
      const charge = await admitted(limiter, keyId, keyLimits, 60);
      assert.equal(charge.headers['anthropic-ratelimit-input-tokens-remaining'], '40');
      const over = await refusal(limiter, keyId, keyLimits, 50);
      assert.equal(over.code, 'rate_limited');
      assert.ok(over.retryAfterSeconds! >= 6, String(over.retryAfterSeconds));
      assert.equal(over.headers?.['anthropic-ratelimit-input-tokens-remaining'], '40');
      const never = await refusal(limiter, keyId, keyLimits, 101);
      assert.equal(never.retryAfterSeconds, undefined);
      assert.match(never.message, /101 input tokens are more than this API key's limit of 100 input tokens per minute/);
      // Refusals charge nothing.
      const after = await admitted(limiter, keyId, keyLimits, 40);
      assert.equal(after.headers['anthropic-ratelimit-input-tokens-remaining'], '0');
    });

    test('output tokens are charged when the reply ends; a debt refuses the next request until it is paid off', async () => {
      const keyId = freshKey('output');
      const keyLimits = limits({ outputTokensPerMinute: 100 });
      const first = await admitted(limiter, keyId, keyLimits);
      assert.equal(first.headers['anthropic-ratelimit-output-tokens-remaining'], '100');
      first.settle(150);
      first.settle(150);
      const refused = await refusal(limiter, keyId, keyLimits, 0);
      assert.equal(refused.code, 'rate_limited');
      assert.match(refused.message, /100 output tokens per minute/);
      // 50 tokens of debt and one of room: 51 tokens at 0.6 s each.
      assert.ok(
        refused.retryAfterSeconds! >= 30 && refused.retryAfterSeconds! <= 31,
        String(refused.retryAfterSeconds),
      );
      assert.equal(refused.headers?.['anthropic-ratelimit-output-tokens-remaining'], '0');
      const reset = Date.parse(refused.headers!['anthropic-ratelimit-output-tokens-reset']!) - Date.now();
      assert.ok(reset > 80_000 && reset <= 91_000, `reset in ${reset} ms`);
    });

    test('requests in flight past the concurrency limit are refused until one ends', async () => {
      const keyId = freshKey('concurrent');
      const keyLimits = limits({ concurrent: 2 });
      const first = await admitted(limiter, keyId, keyLimits);
      const second = await admitted(limiter, keyId, keyLimits);
      const refused = await refusal(limiter, keyId, keyLimits, 0);
      assert.match(refused.message, /limit of 2 requests in flight is reached/);
      assert.equal(refused.retryAfterSeconds, 1);
      first.settle(0);
      const third = await admitted(limiter, keyId, keyLimits);
      second.settle(0);
      third.settle(0);
      (await admitted(limiter, keyId, keyLimits)).settle(0);
    });

    test('a day quota counts input and output tokens, then 429 until midnight UTC with the quota headers', async () => {
      const keyId = freshKey('day');
      const keyLimits = limits({ tokensPerDay: 100 });
      const first = await admitted(limiter, keyId, keyLimits, 40);
      assert.equal(first.headers['mms-quota-tokens-day-limit'], '100');
      assert.equal(first.headers['mms-quota-tokens-day-remaining'], '60');
      const midnight = new Date();
      midnight.setUTCHours(24, 0, 0, 0);
      assert.equal(first.headers['mms-quota-tokens-day-reset'], `${midnight.toISOString().slice(0, 19)}Z`);
      assert.equal(first.headers['anthropic-ratelimit-requests-limit'], undefined);
      await first.settle(30);
      // 70 used: 29 more input tokens leave room for one output token, 30 do not.
      const over = await refusal(limiter, keyId, keyLimits, 30);
      assert.equal(over.code, 'rate_limited');
      assert.equal(over.status, 429);
      assert.match(
        over.message,
        /quota of 100 tokens per day \(UTC\) is used up; it starts again at \d{4}-\d\d-\d\dT00:00:00Z/,
      );
      const untilMidnight = (midnight.getTime() - Date.now()) / 1000;
      assert.ok(
        Math.abs(over.retryAfterSeconds! - untilMidnight) <= 2,
        `${over.retryAfterSeconds} vs ${untilMidnight}`,
      );
      assert.equal(over.headers?.['mms-quota-tokens-day-remaining'], '30');
      const fits = await admitted(limiter, keyId, keyLimits, 29);
      assert.equal(fits.headers['mms-quota-tokens-day-remaining'], '1');
      await fits.settle(5);
      // The last reply took the count past the quota: 104 of 100, nothing left.
      const spent = await refusal(limiter, keyId, keyLimits, 0);
      assert.equal(spent.headers?.['mms-quota-tokens-day-remaining'], '0');
      assert.deepEqual(limiter.stats.refusals.get(keyId), new Map([['tokensPerDay', 2]]));
    });

    test('a prompt over a whole month quota is refused with no retry-after; a refusal charges nothing', async () => {
      const keyId = freshKey('month');
      const keyLimits = limits({ tokensPerMonth: 50, requestsPerMinute: 1 });
      const never = await refusal(limiter, keyId, keyLimits, 50);
      assert.equal(never.retryAfterSeconds, undefined);
      assert.match(never.message, /50 input tokens are more than this API key's quota of 50 tokens per month \(UTC\)/);
      // Neither the quota nor the requests bucket was charged by the refusal.
      const charge = await admitted(limiter, keyId, keyLimits, 49);
      assert.equal(charge.headers['mms-quota-tokens-month-remaining'], '1');
      assert.equal(charge.headers['anthropic-ratelimit-requests-remaining'], '0');
      const standing = await limiter.standing({ id: keyId, limits: keyLimits, models: undefined, admin: false });
      assert.equal(standing.quotas.tokensPerMonth?.used, 49);
      assert.equal(standing.readings.requests?.remaining, 0);
    });

    test('each key has its own limits', async () => {
      const keyLimits = limits({ requestsPerMinute: 1 });
      const first = freshKey('one');
      await admitted(limiter, first, keyLimits);
      await refusal(limiter, first, keyLimits, 0);
      await admitted(limiter, freshKey('other'), keyLimits);
      assert.deepEqual(limiter.stats.refusals.get(first), new Map([['requests', 1]]));
    });
  });
}

storeCases('memory', () => new KeyLimiter(openDatabase(undefined), 'refuse', () => undefined), undefined);

let redis: RedisServer | undefined;
const missing = redisServerMissing();
before(async () => {
  if (missing === undefined) redis = await startRedisServer();
});
after(() => redis?.close());
storeCases(
  'redis',
  () =>
    new KeyLimiter(
      new RedisLimitStore({ url: redis!.url, keyPrefix: 'mms-test:', timeoutMs: 1_000 }),
      'refuse',
      () => undefined,
    ),
  missing,
);
