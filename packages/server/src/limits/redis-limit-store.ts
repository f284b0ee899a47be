/**
 * Limit state in Redis (`limits.store: {"type": "redis", "url": ...}`), so that replicas behind
 * one load balancer enforce one limit (docs/deployment.md). One script call per admission and one
 * per settling (redis-scripts.ts), each one round trip. ioredis is loaded only when a config asks
 * for Redis.
 *
 * Nothing waits for a Redis that is gone: commands are not queued while the connection is down
 * (they fail at once), and one whose connection stays silent for `timeoutMs` fails too, judged
 * after the event loop has read what waits in the socket (reply-watch.ts); the limiter then does
 * what `limits.onStoreError` says. An admission given up on that Redis carries out after all is
 * taken back when its reply comes (WITHDRAW_SCRIPT): the request was served on this replica's
 * own limits, or refused, so neither its charge nor its lease belong in Redis (issue 31: three
 * such leases locked a key out for 58 s). The client reconnects on its own, with a growing pause
 * up to a second. Only the first connection is waited for, up to `timeoutMs`, so that the
 * requests of a service that has just started are not counted as failures of a store it is still
 * reaching.
 *
 * Concurrency across replicas: each request in flight holds a lease in the key's set, renewed by
 * its replica alone while it runs; a replica that dies leaves its leases to expire after LEASE_MS,
 * and a lease whose settling failed is removed at the next renewal that gets through.
 *
 * The quotas (issue 37) are checked and charged in the same calls, and the usage history the
 * console charts is written on the same connection (redis-usage-history.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { KeyLimits } from '../keys/client-key.js';
import type { KeyStanding, LimitStore } from './limit-store.js';
import { quotaReading, type QuotaReadings } from './quota-counter.js';
import { currentPeriod, QUOTAS, type QuotaName } from './quota-period.js';
import { RedisUsageHistory } from './redis-usage-history.js';
import { ReplyWatch } from './reply-watch.js';
import { ADMIT_SCRIPT, READ_SCRIPT, RENEW_SCRIPT, SETTLE_SCRIPT, WITHDRAW_SCRIPT } from './redis-scripts.js';
import { BUCKETS, readAll, type Admission, type BucketName, type LimitName } from './token-bucket.js';

export interface RedisStoreOptions {
  url: string;
  keyPrefix: string;
  timeoutMs: number;
}

/** How long a request's place in flight outlives its replica; renewed every third of it. */
export const LEASE_MS = 15_000;
/** Reconnection pauses grow by this much per try, up to a second. */
const RECONNECT_STEP_MS = 100;
const LIMIT_NAMES: readonly (LimitName | undefined)[] = [undefined, ...BUCKETS, 'concurrent', ...QUOTAS];

interface Script {
  text: string;
  sha: string;
}

function script(text: string): Script {
  return { text, sha: createHash('sha1').update(text).digest('hex') };
}

const ADMIT = script(ADMIT_SCRIPT);
const SETTLE = script(SETTLE_SCRIPT);
const RENEW = script(RENEW_SCRIPT);
const WITHDRAW = script(WITHDRAW_SCRIPT);
const READ = script(READ_SCRIPT);

type AdmitReply = [number, string, string, string, string, string, string, string];
type ReadReply = [string, string, string, string, string, string, string];

/** A key's Redis keys: its buckets, its set in flight, and its quotas' counts in the current periods. */
interface KeyNames {
  requests: string;
  inputTokens: string;
  outputTokens: string;
  inFlight: string;
  tokensPerDay: string;
  tokensPerMonth: string;
}

export class RedisLimitStore implements LimitStore {
  private readonly client: Promise<Redis>;
  /** Resolves once the first connection is made, or `timeoutMs` has passed: the client from then on. */
  private readonly firstConnection: Promise<Redis>;
  /** The client, once the first connection was waited for: no await on a request's path. */
  private settledClient: Redis | undefined;
  /** Leases of requests in flight here, by lease id: the in-flight set each is in. */
  private readonly leases = new Map<string, string>();
  /** Leases whose settling failed, by lease id: the keys the settling named. */
  private readonly orphans = new Map<string, string[]>();
  private readonly watch: ReplyWatch;
  private readonly leasePrefix = randomBytes(6).toString('hex');
  private leaseCount = 0;
  private readonly renewal: NodeJS.Timeout;
  /** The usage history the console charts, on this store's connection (issue 37). */
  readonly usageHistory: RedisUsageHistory;

  constructor(private readonly options: RedisStoreOptions) {
    this.watch = new ReplyWatch(options.timeoutMs);
    this.client = this.open();
    this.firstConnection = this.client.then(async (client) => {
      await this.connected(client);
      this.settledClient = client;
      return client;
    });
    this.renewal = setInterval(() => void this.renewLeases(), LEASE_MS / 3).unref();
    this.usageHistory = new RedisUsageHistory(
      () => this.connection(),
      options.keyPrefix,
      (reply) => this.watch.within(reply, () => undefined),
    );
  }

  async admit(keyId: string, limits: KeyLimits, inputTokens: number): Promise<Admission> {
    const lease = limits.concurrent === undefined ? undefined : `${this.leasePrefix}:${(this.leaseCount += 1)}`;
    const sentAt = Date.now();
    const keys = this.keys(keyId, sentAt);
    const bucketLimits = [limits.requestsPerMinute ?? 0, limits.inputTokensPerMinute ?? 0];
    const quotaLimits = [limits.tokensPerDay ?? 0, limits.tokensPerMonth ?? 0];
    const withdraw = (late: AdmitReply): void => {
      if (late[0] !== 0) return;
      const arguments_ = [...bucketLimits, inputTokens, lease ?? '', ...quotaLimits];
      const withdrawKeys = [keys.requests, keys.inputTokens, keys.inFlight, keys.tokensPerDay, keys.tokensPerMonth];
      // A failure leaves the charge to refill and the lease to expire (LEASE_MS).
      this.run(WITHDRAW, withdrawKeys, arguments_).catch(() => undefined);
    };
    const reply = (await this.run(
      ADMIT,
      Object.values(keys),
      [
        ...bucketLimits,
        limits.outputTokensPerMinute ?? 0,
        limits.concurrent ?? 0,
        inputTokens,
        lease ?? '',
        LEASE_MS,
        ...quotaLimits,
        ...periodEnds(sentAt),
      ],
      withdraw,
    )) as AdmitReply;
    const refusedBy = LIMIT_NAMES[reply[0]];
    if (refusedBy === undefined && lease !== undefined) this.leases.set(lease, keys.inFlight);
    const now = Number(reply[2]);
    const wait = Number(reply[1]);
    return {
      refusedBy,
      retryAfterMs: wait < 0 ? undefined : wait,
      readings: readAll(fullAtTimes(reply, 3, now), limits, now),
      quotas: quotaReadings(limits, [reply[6], reply[7]], sentAt),
      lease: refusedBy === undefined ? lease : undefined,
    };
  }

  async settle(keyId: string, limits: KeyLimits, outputTokens: number, lease: string | undefined): Promise<void> {
    if (lease !== undefined) this.leases.delete(lease);
    const chargesQuota = limits.tokensPerDay !== undefined || limits.tokensPerMonth !== undefined;
    const charges = (limits.outputTokensPerMinute !== undefined || chargesQuota) && outputTokens > 0;
    if (lease === undefined && !charges) return;
    const now = Date.now();
    const keys = this.keys(keyId, now);
    const settleKeys = [keys.outputTokens, keys.inFlight, keys.tokensPerDay, keys.tokensPerMonth];
    try {
      await this.run(SETTLE, settleKeys, [
        limits.outputTokensPerMinute ?? 0,
        outputTokens,
        lease ?? '',
        limits.tokensPerDay ?? 0,
        limits.tokensPerMonth ?? 0,
        ...periodEnds(now),
      ]);
    } catch (error) {
      if (lease !== undefined) this.orphans.set(lease, settleKeys);
      throw error;
    }
  }

  /** The key's buckets, quotas and requests in flight as Redis holds them, charging nothing (the console's). */
  async read(keyId: string, limits: KeyLimits): Promise<KeyStanding> {
    const readAt = Date.now();
    const reply = (await this.run(READ, Object.values(this.keys(keyId, readAt)), [])) as ReadReply;
    const now = Number(reply[0]);
    return {
      readings: readAll(fullAtTimes(reply, 1, now), limits, now),
      quotas: quotaReadings(limits, [reply[5], reply[6]], readAt),
      inFlight: Number(reply[4]),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.renewal);
    const client = await this.client;
    client.disconnect();
  }

  private async open(): Promise<Redis> {
    const { Redis } = await import('ioredis');
    const client = new Redis(this.options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // No commandTimeout: its timer fires on a busy loop before the replies waiting are read.
      connectTimeout: Math.max(this.options.timeoutMs, 1_000),
      retryStrategy: (tries: number) => Math.min(tries * RECONNECT_STEP_MS, 1_000),
    });
    // Failures reach the requests that meet them (and the limiter's log); without a listener
    // ioredis would print each reconnection's error on stderr.
    client.on('error', () => undefined);
    // Every byte the connection reads tells the reply watch that Redis is answering.
    client.on('connect', () => client.stream.on('data', () => this.watch.heard()));
    // Loaded on every (re)connection, ahead of any request's call: EVALSHA then finds them, and a
    // settling never falls back to EVAL behind an admission sent after it.
    client.on('ready', () => {
      for (const { text } of [ADMIT, SETTLE, RENEW, WITHDRAW]) client.script('LOAD', text).catch(() => undefined);
    });
    client.connect().catch(() => undefined);
    return client;
  }

  private connected(client: Redis): Promise<void> {
    if (client.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.options.timeoutMs);
      client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * The key's buckets, in-flight set and quota counts in the periods of `now`, in one hash slot
   * (`{id}`), as a script's keys must be in a cluster; in the order the scripts take them.
   */
  private keys(keyId: string, now: number): KeyNames {
    const base = `${this.options.keyPrefix}{${keyId}}:`;
    return {
      requests: `${base}requests`,
      inputTokens: `${base}input-tokens`,
      outputTokens: `${base}output-tokens`,
      inFlight: `${base}in-flight`,
      tokensPerDay: `${base}tokens-day:${currentPeriod('tokensPerDay', now).id}`,
      tokensPerMonth: `${base}tokens-month:${currentPeriod('tokensPerMonth', now).id}`,
    };
  }

  /** The client, once the first connection was waited for. */
  private connection(): Promise<Redis> {
    return this.settledClient === undefined ? this.firstConnection : Promise.resolve(this.settledClient);
  }

  /**
   * EVALSHA, and EVAL when Redis does not have the script yet (a first call, a restarted Redis),
   * within the reply watch; a reply after the watch gave up goes to `late`.
   */
  private async run<Reply>(
    which: Script,
    keys: string[],
    args: Array<string | number>,
    late: (reply: Reply) => void = () => undefined,
  ): Promise<unknown> {
    const client = this.settledClient ?? (await this.firstConnection);
    const sent = client.evalsha(which.sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(which.text, keys.length, ...keys, ...args);
    });
    return this.watch.within(sent as Promise<Reply>, late);
  }

  private async renewLeases(): Promise<void> {
    for (const [lease, keys] of this.orphans) {
      const removed = await this.run(SETTLE, keys, [0, 0, lease, 0, 0, 0, 0]).then(
        () => true,
        () => false,
      );
      if (!removed) return;
      this.orphans.delete(lease);
    }
    if (this.leases.size === 0) return;
    const keys = [...this.leases.values()];
    // A failure here is one the next admission meets too; the leases are renewed next time.
    await this.run(RENEW, keys, [LEASE_MS, ...this.leases.keys()]).catch(() => undefined);
  }
}

/** The ms until the day and the month of `now` end: how long their quota keys are kept. */
function periodEnds(now: number): [number, number] {
  return [currentPeriod('tokensPerDay', now).endsAt - now, currentPeriod('tokensPerMonth', now).endsAt - now];
}

/** The quotas the key has, from the counts a script returned ("" for none). */
function quotaReadings(limits: KeyLimits, counts: [string, string], now: number): QuotaReadings {
  const readings: QuotaReadings = {};
  QUOTAS.forEach((quota: QuotaName, index) => {
    const limit = limits[quota];
    if (limit !== undefined) readings[quota] = quotaReading(limit, Number(counts[index] || 0), quota, now);
  });
  return readings;
}

/** The buckets' full-again times a script returned from `first` on ("" for a bucket unset: full `now`). */
function fullAtTimes(reply: readonly (string | number)[], first: number, now: number): Record<BucketName, number> {
  const fullAt = {} as Record<BucketName, number>;
  BUCKETS.forEach(
    (bucket, index) => (fullAt[bucket] = reply[first + index] === '' ? now : Number(reply[first + index])),
  );
  return fullAt;
}
