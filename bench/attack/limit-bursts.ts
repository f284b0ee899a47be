/**
 * The keys' limits under bursts (issue 31): `--burst` requests of one key sent at once over HTTP
 * to a service in a child process, on the memory store and on a real redis-server that this script
 * starts (loopback), with Redis healthy, paused for 3 s (SIGSTOP, as a stalled host) and killed
 * mid-burst, under `onStoreError` "allow" and "refuse". Each case counts the replies by status and
 * checks what the limits promise:
 *
 * - never more requests admitted than the limit, on either store, whatever Redis does;
 * - no 503 while Redis is healthy;
 * - no key locked out once Redis is back (a key limited to 3 in flight gets its 3 at once).
 *
 * Each broken promise is a finding (the summary row's "other findings"); exit 1 when there is one.
 *
 *   node --import tsx bench/attack/limit-bursts.ts [--burst 1500] [--checkout ../mms-main] [--only paused]
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { parseArgs } from 'node:util';
import { redisServerMissing, startRedisServer, type RedisServer } from '@model-messages/testing';
import { positiveInteger } from '../command-arguments.js';
import { startHealthWatch } from './health-watch.js';
import { startServiceChild, type ServiceChild } from './service-child.js';
import { statusCountRow, statusCountText, type StatusCounts } from './outcome-table.js';
import { printSummaryLine, type SummaryRow } from './summary-line.js';

const { values } = parseArgs({
  options: {
    burst: { type: 'string', default: '1500' },
    checkout: { type: 'string' },
    only: { type: 'string' },
  },
});
const burstSize = positiveInteger(values.burst, 'burst');
const missing = redisServerMissing();
if (missing !== undefined) throw new Error(`limit-bursts.ts needs Redis: ${missing}`);

const KEY = 'attack-limits-key-0123456789abcdef';
const HELD_KEY = 'attack-held-key-0123456789abcdef';
const PAUSE_MS = 3_000;
/** Long enough for a reconnection (its pause grows to 1 s) and the late replies' withdrawals. */
const SETTLE_MS = 1_500;

type Statuses = StatusCounts;

interface Case {
  name: string;
  store: 'memory' | 'redis';
  onStoreError: 'allow' | 'refuse';
  limits: Record<string, number>;
  /** Preload the loop blocker (loop-blocker.ts) with this hold, for service.blockLoop(). */
  loopBlockMs?: number;
  /** What the case does with Redis around its burst; answers its findings. */
  run: (context: CaseContext) => Promise<string[]>;
}

interface CaseContext {
  service: ServiceChild;
  redis: RedisServer;
  limits: Record<string, number>;
  statuses: Statuses;
}

const CASES: Case[] = [
  {
    name: 'memory store, 10 a minute',
    store: 'memory',
    onStoreError: 'allow',
    limits: { requestsPerMinute: 10 },
    run: async ({ service, statuses }) => admittedAtMost(await burst(service, KEY, burstSize, statuses), 10, 10),
  },
  ...(['allow', 'refuse'] as const).map((onStoreError): Case => ({
    name: `Redis healthy, ${onStoreError}, 10 a minute`,
    store: 'redis',
    onStoreError,
    limits: { requestsPerMinute: 10 },
    run: async ({ service, statuses }) => {
      const replies = await burst(service, KEY, burstSize, statuses);
      return [...admittedAtMost(replies, 10, 10), ...noUnavailable(replies)];
    },
  })),
  ...(['allow', 'refuse'] as const).map((onStoreError): Case => ({
    name: `Redis healthy, ${onStoreError}, the service's loop held 1 s mid-burst, 10 a minute`,
    store: 'redis',
    onStoreError,
    limits: { requestsPerMinute: 10 },
    loopBlockMs: 1_000,
    run: async ({ service, statuses }) => {
      // The loop is held once the requests are in, with their admissions on their way to Redis.
      const sending = burst(service, KEY, burstSize, statuses);
      await pause(300);
      service.blockLoop();
      const replies = await sending;
      return [...admittedAtMost(replies, 10, 10), ...noUnavailable(replies)];
    },
  })),
  {
    name: 'Redis paused 3 s mid-burst, allow, 20 a minute',
    store: 'redis',
    onStoreError: 'allow',
    limits: { requestsPerMinute: 20 },
    run: async ({ service, redis, statuses }) => {
      const before = await burst(service, KEY, 2, statuses);
      const { replies, held } = await pausedBurst(service, redis, statuses);
      await pause(SETTLE_MS);
      const findings = admittedAtMost(sum(before, replies), 20, 20);
      if ((held.get('200') ?? 0) === 0) findings.push('the held key was admitted nothing during the outage');
      findings.push(...(await noLockout(service, statuses)));
      return findings;
    },
  },
  {
    name: 'Redis paused 3 s mid-burst, refuse, 5 a minute',
    store: 'redis',
    onStoreError: 'refuse',
    limits: { requestsPerMinute: 5 },
    run: async ({ service, redis, statuses }) => {
      const before = await burst(service, KEY, 2, statuses);
      const { replies, held } = await pausedBurst(service, redis, statuses);
      await pause(SETTLE_MS);
      // What Redis charged late for the requests refused with 503 is taken back: three are left.
      const after = await burst(service, KEY, 10, statuses);
      const findings = admittedAtMost(sum(before, replies, after), 5, 5);
      if ((held.get('503') ?? 0) === 0) findings.push('the held key got no 503 while Redis was gone');
      findings.push(...(await noLockout(service, statuses)));
      return findings;
    },
  },
  ...(['allow', 'refuse'] as const).map((onStoreError): Case => ({
    name: `Redis killed mid-burst, ${onStoreError}, 10 a minute`,
    store: 'redis',
    onStoreError,
    limits: { requestsPerMinute: 10 },
    run: async ({ service, redis, statuses }) => {
      const before = await burst(service, KEY, 4, statuses);
      const sending = burst(service, KEY, burstSize, statuses);
      await redis.stop();
      const replies = await sending;
      await redis.start();
      await pause(SETTLE_MS);
      const after = await burst(service, KEY, 20, statuses);
      // A Redis started empty forgets the minute; the replica's own count does not.
      return admittedAtMost(sum(before, replies, after), 10, onStoreError === 'allow' ? 10 : undefined);
    },
  })),
];

/** `count` requests of `key` at once, each on its own connection; their statuses, also added to `statuses`. */
async function burst(service: ServiceChild, key: string, count: number, statuses: Statuses): Promise<Statuses> {
  const replies: Statuses = new Map();
  const outcomes = await Promise.all(Array.from({ length: count }, () => send(service, key)));
  for (const outcome of outcomes) {
    replies.set(outcome, (replies.get(outcome) ?? 0) + 1);
    statuses.set(outcome, (statuses.get(outcome) ?? 0) + 1);
  }
  return replies;
}

/** A burst sent while Redis is paused, resumed after PAUSE_MS; the held key's requests (3 in flight at most) go with it. */
async function pausedBurst(
  service: ServiceChild,
  redis: RedisServer,
  statuses: Statuses,
): Promise<{ replies: Statuses; held: Statuses }> {
  redis.pause();
  const resume = pause(PAUSE_MS).then(() => redis.resume());
  try {
    const [replies, held] = await Promise.all([
      burst(service, KEY, burstSize, statuses),
      burst(service, HELD_KEY, 100, statuses),
    ]);
    return { replies, held };
  } finally {
    await resume;
  }
}

function send(service: ServiceChild, key: string): Promise<string> {
  const body = JSON.stringify({ model: 'mid', max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] });
  return new Promise((resolve) => {
    const outgoing = request(
      `${service.baseURL}/v1/messages`,
      {
        method: 'POST',
        agent: false,
        headers: {
          ...service.headers,
          'x-api-key': key,
          'content-length': Buffer.byteLength(body),
          connection: 'close',
        },
        timeout: 60_000,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(String(response.statusCode)));
        response.on('error', () => resolve('reset'));
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
    outgoing.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    outgoing.end(body);
  });
}

function admittedAtMost(replies: Statuses, limit: number, exactly: number | undefined): string[] {
  const admitted = replies.get('200') ?? 0;
  if (admitted > limit) return [`${admitted} requests admitted against a limit of ${limit}`];
  if (exactly !== undefined && admitted !== exactly) return [`${admitted} requests admitted where ${exactly} had room`];
  return [];
}

function noUnavailable(replies: Statuses): string[] {
  const unavailable = replies.get('503') ?? 0;
  return unavailable === 0 ? [] : [`${unavailable} answered 503 while Redis was healthy`];
}

/** The held key (3 in flight) had its burst during the outage; once Redis is back its 3 places are free. */
async function noLockout(service: ServiceChild, statuses: Statuses): Promise<string[]> {
  const after = await burst(service, HELD_KEY, 3, statuses);
  const admitted = after.get('200') ?? 0;
  return admitted === 3 ? [] : [`once Redis was back, the held key got ${admitted} of its 3 places in flight`];
}

function sum(...parts: Statuses[]): Statuses {
  const total: Statuses = new Map();
  for (const part of parts) for (const [status, count] of part) total.set(status, (total.get(status) ?? 0) + count);
  return total;
}

function pause(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function hash(key: string): string {
  return `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

const redis = await startRedisServer();
const rows: SummaryRow[] = [];
let findingsInAll = 0;
try {
  for (const entry of CASES.filter((candidate) => values.only === undefined || candidate.name.includes(values.only))) {
    const store =
      entry.store === 'memory'
        ? { type: 'memory' }
        : { type: 'redis', url: redis.url, keyPrefix: `attack-${rows.length}:`, timeoutMs: 250 };
    const service = await startServiceChild({
      checkout: values.checkout,
      logLevel: 'warn',
      loopBlockMs: entry.loopBlockMs,
      config: {
        models: [
          {
            id: 'mid',
            tier: 'mid',
            generation: 'newer',
            contextWindow: 4096,
            maxOutputTokens: 1024,
            backend: { type: 'scripted' },
          },
        ],
        keys: [
          { id: 'burst', hash: hash(KEY), limits: entry.limits },
          { id: 'held', hash: hash(HELD_KEY), limits: { concurrent: 3 } },
        ],
        limits: { store, onStoreError: entry.onStoreError },
        listen: { maxConnections: 4096 },
      },
    });
    const health = await startHealthWatch(service.baseURL);
    const startedAt = Date.now();
    const statuses: Statuses = new Map();
    let findings: string[];
    try {
      findings = await entry.run({ service, redis, limits: entry.limits, statuses });
    } finally {
      redis.resume();
      if (!(await redisAnswers(redis))) await redis.start();
    }
    const { worstGapMs } = await health.stop();
    const row = statusCountRow(`limits: ${entry.name}`, service, statuses, worstGapMs, startedAt, findings);
    console.log(
      `${entry.name}: ${statusCountText(statuses)}; worst /health gap ${worstGapMs.toFixed(0)} ms${findings.length === 0 ? '' : `\n  FINDINGS: ${findings.join('; ')}`}`,
    );
    findingsInAll += findings.length;
    rows.push(row);
    await service.stop();
  }
} finally {
  await redis.close();
}
printSummaryLine('limit-bursts', rows);
if (findingsInAll > 0) process.exitCode = 1;

/** Whether the redis-server answers (a case that killed it may have started it again). */
async function redisAnswers(server: RedisServer): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const socket = connect(server.port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
