/**
 * What a key's limits cost per request (issue 20), side by side in one run: no limits (a plain
 * key), limits in memory, and limits in a real redis-server on loopback that this script starts
 * (and stops). Two measures:
 *
 * - the limiter alone: one admission (check and charge) and one settling per request, sequential,
 *   as a request runs them; p50 and p99 in microseconds. No limits is the path a plain key takes
 *   (one test of `key.limits`), measured the same way for the baseline.
 * - whole requests: POST /v1/messages (scripted backend, JSON reply) over one keep-alive
 *   connection, one at a time, to one in-process service per store, rounds alternating; p50 per
 *   key, and what the limits add to it.
 *
 *   node --import tsx bench/key-limits.ts [--operations 20000] [--requests 2000] [--rounds 3]
 *
 * Aims: memory under 20 us a request; Redis under 0.3 ms at p50 on loopback.
 */
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { redisServerMissing, scriptedModels, startRedisServer, startService } from '@model-messages/testing';
import type { KeyLimits } from '../packages/server/src/keys/client-key.js';
import { KeyLimiter } from '../packages/server/src/limits/key-limiter.js';
import { RedisLimitStore } from '../packages/server/src/limits/redis-limit-store.js';
import { openDatabase } from '../packages/server/src/limits/sqlite-database.js';
import { positiveInteger } from './command-arguments.js';
import { median } from './statistics.js';

const { values } = parseArgs({
  options: {
    operations: { type: 'string', default: '20000' },
    requests: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
  },
});
const settings = {
  operations: positiveInteger(values.operations, 'operations'),
  requests: positiveInteger(values.requests, 'requests'),
  rounds: positiveInteger(values.rounds, 'rounds'),
};

/** Every limit set, high enough that none is reached: each bucket is read and charged. */
const LIMITS: KeyLimits = {
  requestsPerMinute: 1_000_000_000,
  inputTokensPerMinute: 1_000_000_000,
  outputTokensPerMinute: 1_000_000_000,
  concurrent: 1_000,
  tokensPerDay: undefined,
  tokensPerMonth: undefined,
};
const PLAIN_KEY = 'bench-plain-key-0123456789';
const LIMITED_KEY = 'bench-limited-key-0123456789';

function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? Number.NaN;
}

/**
 * Per operation, in microseconds: p50 and p99 of `operations` sequential runs after a warm-up.
 * `after`: work that follows each run untimed (a settling, when only the admission is timed).
 */
async function timeEach(
  operations: number,
  run: () => Promise<void>,
  after?: () => Promise<void>,
): Promise<{ p50: number; p99: number }> {
  for (let index = 0; index < Math.min(2_000, operations); index += 1) {
    await run();
    await after?.();
  }
  const times: number[] = [];
  for (let index = 0; index < operations; index += 1) {
    const start = performance.now();
    await run();
    times.push((performance.now() - start) * 1000);
    await after?.();
  }
  times.sort((left, right) => left - right);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

/**
 * One request's work for the limiter: admission, then settling with 20 output tokens, as the
 * service runs them (the settling not awaited). `settled`: the last settling, waited for untimed
 * before the next admission, so that only the admission's round trip is timed. `shared`: the
 * limiter's store is Redis, which must admit every request (an admission of the replica's count
 * alone means the store failed).
 */
function limiterRequest(
  limiter: KeyLimiter | undefined,
  keyId: string,
  shared = false,
): { run: () => Promise<void>; settled: () => Promise<void> } {
  const key = { id: keyId, limits: limiter === undefined ? undefined : LIMITS, models: undefined, admin: false };
  let settling: Promise<void> = Promise.resolve();
  return {
    run: async () => {
      if (key.limits === undefined) return;
      const charge = limiter!.enter(key)!;
      await charge.admit(20);
      if (shared && !charge.sharedAdmission) throw new Error('the store failed');
      settling = charge.settle(20);
    },
    settled: () => settling,
  };
}

function hashed(key: string): string {
  return `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

async function main(): Promise<void> {
  const missing = redisServerMissing();
  if (missing !== undefined) throw new Error(`bench/key-limits.ts needs Redis: ${missing}`);
  const redis = await startRedisServer();
  const memoryLimiter = new KeyLimiter(openDatabase(undefined), 'refuse', () => undefined);
  const redisLimiter = new KeyLimiter(
    new RedisLimitStore({ url: redis.url, keyPrefix: 'bench:', timeoutMs: 1_000 }),
    'refuse',
    () => undefined,
  );
  const { Redis } = await import('ioredis');
  const pinger = new Redis(redis.url);
  console.log(
    `load average at start: ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  );

  const limiterRows = new Map<string, Array<{ p50: number; p99: number }>>();
  for (let round = 0; round < settings.rounds; round += 1) {
    const redisRequest = limiterRequest(redisLimiter, 'bench', true);
    const cases: Array<[string, () => Promise<void>, (() => Promise<void>) | undefined]> = [
      ['no limits', limiterRequest(undefined, 'plain').run, undefined],
      ['memory', limiterRequest(memoryLimiter, 'bench').run, undefined],
      ['redis: a bare PING round trip (the floor)', async () => void (await pinger.ping()), undefined],
      ['redis: admission (on the request path)', redisRequest.run, redisRequest.settled],
      [
        'redis: admission + settling',
        async () => {
          await redisRequest.run();
          await redisRequest.settled();
        },
        undefined,
      ],
    ];
    if (round % 2 === 1) cases.reverse();
    for (const [name, run, after] of cases) {
      const operations = name.startsWith('redis') ? Math.ceil(settings.operations / 4) : settings.operations;
      const row = limiterRows.get(name) ?? [];
      row.push(await timeEach(operations, run, after));
      limiterRows.set(name, row);
    }
  }
  console.log('\nLimiter alone, per request (us), median of rounds');
  console.log('| store | p50 | p99 |\n|---|---|---|');
  for (const [name, rows] of limiterRows)
    console.log(
      `| ${name} | ${median(rows.map((row) => row.p50)).toFixed(2)} | ${median(rows.map((row) => row.p99)).toFixed(2)} |`,
    );

  const keys = [{ id: 'limited', hash: hashed(LIMITED_KEY), limits: LIMITS }];
  const models = scriptedModels();
  const [memoryService, redisService] = await Promise.all([
    startService({ apiKeys: [PLAIN_KEY], keys, models }),
    startService({
      apiKeys: [PLAIN_KEY],
      keys,
      models,
      limits: { store: { type: 'redis', url: redis.url, keyPrefix: 'bench-service:' } },
    }),
  ]);
  const agent = new Agent({ connections: 1, pipelining: 1 });
  const body = JSON.stringify({ model: 'mid', max_tokens: 16, messages: [{ role: 'user', content: 'hello bench' }] });
  const post = (baseURL: string, apiKey: string) => async () => {
    const response = await request(`${baseURL}/v1/messages`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body,
    });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
  };
  const requestRows = new Map<string, number[]>();
  for (let round = 0; round < settings.rounds; round += 1) {
    const cases: Array<[string, () => Promise<void>]> = [
      ['no limits (plain key)', post(memoryService.baseURL, PLAIN_KEY)],
      ['memory', post(memoryService.baseURL, LIMITED_KEY)],
      ['redis', post(redisService.baseURL, LIMITED_KEY)],
    ];
    if (round % 2 === 1) cases.reverse();
    for (const [name, run] of cases) {
      const row = requestRows.get(name) ?? [];
      row.push((await timeEach(settings.requests, run)).p50);
      requestRows.set(name, row);
    }
  }
  const baseline = median(requestRows.get('no limits (plain key)')!);
  console.log('\nWhole requests: POST /v1/messages p50 (us), median of rounds, one connection, one at a time');
  console.log('| key | p50 | added to no limits | ratio to no limits |\n|---|---|---|---|');
  for (const [name, rows] of requestRows) {
    const p50 = median(rows);
    console.log(`| ${name} | ${p50.toFixed(1)} | ${(p50 - baseline).toFixed(1)} | ${(p50 / baseline).toFixed(3)} |`);
  }
  console.log(
    `\nload average at end: ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  );
  await agent.close();
  pinger.disconnect();
  await Promise.all([memoryService.close(), redisService.close(), memoryLimiter.close(), redisLimiter.close()]);
  await redis.close();
}

await main();
