/**
 * Limits kept in Redis (issue 20), against a real redis-server this test starts on a free port
 * and stops (skipped, saying why, where none is installed): two replicas on one Redis enforce one
 * limit, requests in flight included; a Redis stopped mid-run is what `limits.onStoreError` says
 * (served on the replica's own limits, or 503), logged and counted; once it is back, Redis's
 * limits apply again.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import {
  redisServerMissing,
  scriptedModels,
  startRedisServer,
  startService,
  type RedisServer,
  type RunningService,
} from '@model-messages/testing';

const KEY = 'mms-shared-key-0123456789abcdef';
const HASH = `sha256:${createHash('sha256').update(KEY).digest('hex')}`;
const ADMIN = 'mms-shared-admin-0123456789abcdef';
const missing = redisServerMissing();
/** A model whose stream lasts, to hold a place in flight. */
const SLOW_MODEL = {
  id: 'slow',
  tier: 'mid' as const,
  generation: 'newer' as const,
  contextWindow: 4096,
  maxOutputTokens: 512,
  backend: { type: 'scripted' as const, tokenDelayMs: 40 },
};

function client(service: RunningService): Anthropic {
  return new Anthropic({ baseURL: service.baseURL, apiKey: KEY, maxRetries: 0 });
}

function ask(service: RunningService) {
  return client(service)
    .messages.create({ model: 'mid', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] })
    .withResponse();
}

async function failure(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await promise.then(
    () => assert.fail('expected a failure'),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof Anthropic.APIError, String(error));
  return error;
}

/** A replica: the same config (one Redis, one key prefix), its own process state. */
function replica(
  redis: RedisServer,
  prefix: string,
  limits: Record<string, number>,
  onStoreError: 'allow' | 'refuse' = 'allow',
  logLines?: Array<Record<string, unknown>>,
): Promise<RunningService> {
  // timeoutMs: long enough for a busy machine, where 500 ms once passed before the first answer.
  return startService(
    {
      models: [...scriptedModels(), SLOW_MODEL],
      keys: [
        { id: 'shared', hash: HASH, limits },
        { id: 'ops', hash: `sha256:${createHash('sha256').update(ADMIN).digest('hex')}`, admin: true },
      ],
      limits: { store: { type: 'redis', url: redis.url, keyPrefix: prefix, timeoutMs: 2_000 }, onStoreError },
    },
    process.cwd(),
    logLines === undefined
      ? {}
      : {
          log: {
            level: 'info',
            destination: {
              write(text: string) {
                for (const line of text.split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
              },
            },
          },
        },
  );
}

function prefix(): string {
  return `mms-test-${randomBytes(4).toString('hex')}:`;
}

async function metric(service: RunningService, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${service.baseURL}/metrics`, { headers: { 'x-api-key': KEY } })).text();
  const match = text.match(pattern);
  return match ? Number(match[1]) : 0;
}

describe('limits in Redis', { skip: missing }, () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedisServer();
  });
  after(() => redis?.close());

  test('two replicas on one Redis enforce one requests limit', async () => {
    const shared = prefix();
    const [first, second] = await Promise.all([
      replica(redis, shared, { requestsPerMinute: 4 }),
      replica(redis, shared, { requestsPerMinute: 4 }),
    ]);
    try {
      const remaining = [];
      for (const service of [first, second, first, second]) {
        const { response } = await ask(service);
        remaining.push(response.headers.get('anthropic-ratelimit-requests-remaining'));
      }
      assert.deepEqual(remaining, ['3', '2', '1', '0']);
      for (const service of [first, second]) {
        const refused = await failure(ask(service));
        assert.equal(refused.status, 429);
        assert.equal(refused.type, 'rate_limit_error');
        assert.ok(Number(refused.headers?.get('retry-after')) >= 14, refused.headers?.get('retry-after') ?? '');
      }
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test('two replicas on one Redis share one day quota: past it, each answers 429 with retry-after at midnight UTC', async () => {
    const shared = prefix();
    const [first, second] = await Promise.all([
      replica(redis, shared, { tokensPerDay: 80 }),
      replica(redis, shared, { tokensPerDay: 80 }),
    ]);
    try {
      let spent = 0;
      let input = 0;
      let refusedAt: number | undefined;
      for (let sent = 0; sent < 20 && refusedAt === undefined; sent += 1) {
        const service = sent % 2 === 0 ? first : second;
        const outcome = await ask(service).catch((error: unknown) => error);
        if (outcome instanceof Anthropic.APIError) refusedAt = sent;
        else if (outcome instanceof Error) throw outcome;
        else {
          const { data, response } = outcome as Awaited<ReturnType<typeof ask>>;
          // Each replica's reply tells the shared count: the other replica's requests included.
          assert.equal(
            response.headers.get('mms-quota-tokens-day-remaining'),
            String(80 - spent - data.usage.input_tokens),
          );
          spent += data.usage.input_tokens + data.usage.output_tokens;
          input = data.usage.input_tokens;
        }
      }
      assert.ok(refusedAt !== undefined && refusedAt >= 2, `refused at ${refusedAt}`);
      const midnight = new Date();
      midnight.setUTCHours(24, 0, 0, 0);
      for (const service of [first, second]) {
        const refused = await failure(ask(service));
        assert.equal(refused.status, 429);
        assert.equal(refused.type, 'rate_limit_error');
        const retryAfter = Number(refused.headers?.get('retry-after'));
        assert.ok(Math.abs(retryAfter - (midnight.getTime() - Date.now()) / 1000) <= 2, String(retryAfter));
        // Too little left for the prompt and one output token (the last reply's output may still
        // be on its way to Redis: it is charged once the reply has ended).
        const left = Number(refused.headers?.get('mms-quota-tokens-day-remaining'));
        assert.ok(left < input + 1 && left >= Math.max(0, 80 - spent), `${left} left`);
      }
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test("two replicas on one Redis add to one usage history, which either replica's console reads (issue 37)", async () => {
    const shared = prefix();
    const [first, second] = await Promise.all([
      replica(redis, shared, { requestsPerMinute: 100 }),
      replica(redis, shared, { requestsPerMinute: 100 }),
    ]);
    try {
      let tokens = 0;
      for (const service of [first, second, second]) {
        const { data } = await ask(service);
        tokens += data.usage.input_tokens + data.usage.output_tokens;
      }
      const usage = async (service: RunningService) => {
        const response = await fetch(`${service.baseURL}/v1/admin/usage?range=day`, {
          headers: { 'x-api-key': ADMIN, 'anthropic-version': '2023-06-01' },
        });
        assert.equal(response.status, 200);
        const { data } = (await response.json()) as {
          data: Array<{ key_id: string; requests: number; input_tokens: number; output_tokens: number }>;
        };
        const rows = data.filter((row) => row.key_id === 'shared');
        return {
          requests: rows.reduce((sum, row) => sum + row.requests, 0),
          tokens: rows.reduce((sum, row) => sum + row.input_tokens + row.output_tokens, 0),
        };
      };
      // Each replica writes its own counts when asked: the first reads its one request, the
      // second, asked after both wrote, reads all three.
      assert.equal((await usage(first)).requests, 1);
      assert.deepEqual(await usage(second), { requests: 3, tokens });
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test('two replicas on one Redis share one concurrency limit', async () => {
    const shared = prefix();
    const [first, second] = await Promise.all([
      replica(redis, shared, { concurrent: 1 }),
      replica(redis, shared, { concurrent: 1 }),
    ]);
    try {
      const controller = new AbortController();
      const stream = client(first).messages.stream(
        { model: 'slow', max_tokens: 200, messages: [{ role: 'user', content: 'word '.repeat(100) }] },
        { signal: controller.signal },
      );
      const reading = stream.done().catch(() => undefined);
      await new Promise<void>((resolve) => stream.on('text', () => resolve()));
      const refused = await failure(ask(second));
      assert.equal(refused.status, 429, 'the other replica sees the request in flight');
      controller.abort();
      await reading;
      let admitted = false;
      for (let attempt = 0; attempt < 50 && !admitted; attempt += 1) {
        admitted = await ask(second).then(
          () => true,
          () => false,
        );
        if (!admitted) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(admitted, 'the place in flight never came back');
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test("a Redis stopped mid-run: allow serves on the replica's own limits, refuse answers 503; both logged and counted", async () => {
    const allowLog: Array<Record<string, unknown>> = [];
    const allowing = await replica(redis, prefix(), { requestsPerMinute: 1000 }, 'allow', allowLog);
    const refusing = await replica(redis, prefix(), { requestsPerMinute: 1000 }, 'refuse');
    try {
      for (const service of [allowing, refusing]) {
        const { response } = await ask(service);
        assert.equal(response.headers.get('anthropic-ratelimit-requests-limit'), '1000');
      }
      await redis.stop();

      const served = await ask(allowing);
      assert.equal(served.data.type, 'message');
      // The replica counted the request before Redis went and this one: two of its thousand are
      // spent, less what refilled meanwhile (one every 60 ms).
      assert.equal(served.response.headers.get('anthropic-ratelimit-requests-limit'), '1000');
      const remaining = Number(served.response.headers.get('anthropic-ratelimit-requests-remaining'));
      assert.ok(remaining >= 998 && remaining <= 999, String(remaining));
      const refused = await failure(ask(refusing));
      assert.equal(refused.status, 503);
      assert.equal(refused.type, 'api_error');
      assert.equal(refused.headers?.get('mms-error-code'), 'limits_unavailable');
      assert.equal(refused.headers?.get('retry-after'), '1');

      assert.equal(await metric(allowing, /mms_limit_store_failures_total\{outcome="allowed"\} (\d+)/), 1);
      assert.equal(
        await metric(allowing, /^mms_limit_store_reachable (\d+)$/m),
        0,
        'the metrics say the store is gone',
      );
      assert.equal(await metric(refusing, /mms_limit_store_failures_total\{outcome="refused"\} (\d+)/), 1);
      const down = allowLog.filter((line) => line.event === 'limit-store');
      assert.deepEqual(
        down.map((line) => line.state),
        ['unreachable'],
      );

      await redis.start();
      const reachable = () => allowLog.some((line) => line.event === 'limit-store' && line.state === 'reachable');
      for (let attempt = 0; attempt < 100 && !reachable(); attempt += 1) {
        const { response } = await ask(allowing);
        assert.equal(response.headers.get('anthropic-ratelimit-requests-limit'), '1000');
        if (!reachable()) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(reachable(), 'Redis never answered again');
      // Each replica reconnects on its own schedule: the refusing one may still be a moment behind.
      let servedAgain: Awaited<ReturnType<typeof ask>> | undefined;
      for (let attempt = 0; attempt < 100 && servedAgain === undefined; attempt += 1) {
        servedAgain = await ask(refusing).catch(() => undefined);
        if (servedAgain === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(servedAgain, 'the refusing replica never served again');
      assert.equal(servedAgain.response.headers.get('anthropic-ratelimit-requests-limit'), '1000');
      assert.deepEqual(
        allowLog.filter((line) => line.event === 'limit-store').map((line) => line.state),
        ['unreachable', 'reachable'],
      );
    } finally {
      await Promise.all([allowing.close(), refusing.close()]);
    }
  });
});
