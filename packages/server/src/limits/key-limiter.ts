/**
 * The keys' limits on a message request (issue 20). A request counts against its key's requests
 * in flight from its first byte (`enter`, before its body is read: issue 31), and is checked and
 * charged once its prompt is counted and before it is admitted to its model (`LimitCharge.admit`),
 * so that a refused request costs no queue place and no generation; it is settled when its reply
 * ends, with the output tokens it generated (a stream cut short pays what it produced). Past a
 * limit: 429 rate_limit_error with `retry-after` and the `anthropic-ratelimit-*` headers, which
 * successful replies carry too.
 *
 * This replica counts every key's limits itself (replica-limits.ts): alone with the memory store;
 * with Redis as a guard beside the shared count, charged first and taken back when Redis refuses.
 * A shared store that fails (Redis unreachable, or silent past its timeout) is
 * `limits.onStoreError`'s case: "allow" serves the request on this replica's own limits, "refuse"
 * answers 503 limits_unavailable. Each such request is counted (mms_limit_store_failures_total);
 * the log says when the store became unreachable and when it answered again, not once per request.
 *
 * Issue 37 added the quotas, tokens per UTC day and month, checked and charged with the per-minute
 * limits in the same calls, here and in Redis; with the memory store they, and the usage history
 * the console charts, are kept in the data folder's database (sqlite-database.ts), so that a
 * restart keeps them.
 */
import { ServiceError } from '@model-messages/protocol';
import type { LimitsConfig } from '../config/key-config.js';
import type { ClientKey, KeyLimits } from '../keys/client-key.js';
import type { LimitStoreEvent } from './limit-store-event.js';
import type { KeyStanding } from './limit-store.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { RedisLimitStore } from './redis-limit-store.js';
import { ReplicaLimits } from './replica-limits.js';
import { openDatabase, type Database } from './sqlite-database.js';
import { SqliteQuotaLedger } from './sqlite-quota-ledger.js';
import { SqliteUsageHistory } from './sqlite-usage-history.js';
import { BUCKET_LIMITS, CONCURRENT_RETRY_MS, type Admission, type LimitName } from './token-bucket.js';
import type { UsageHistoryStore } from './usage-history.js';

/** What a store failure did to a request: served on this replica's limits, refused, or a settling lost. */
export type StoreFailureOutcome = 'allowed' | 'refused' | 'unsettled';

/** Counts the metrics read when /metrics is scraped (observability/service-metrics.ts). */
export interface LimiterStats {
  /** Requests refused, by key id and limit. */
  readonly refusals: ReadonlyMap<string, ReadonlyMap<LimitName, number>>;
  readonly storeFailures: Readonly<Record<StoreFailureOutcome, number>>;
  /** Whether the shared store answers; true where there is none. */
  readonly storeReachable: boolean;
}

const LIMIT_WORDS: Readonly<Record<LimitName, string>> = {
  requests: 'requests per minute',
  inputTokens: 'input tokens per minute',
  outputTokens: 'output tokens per minute',
  concurrent: 'requests in flight',
  tokensPerDay: 'tokens per day (UTC)',
  tokensPerMonth: 'tokens per month (UTC)',
};

/** The config field of each limit. */
const LIMIT_FIELDS: Readonly<Record<LimitName, keyof KeyLimits>> = {
  ...BUCKET_LIMITS,
  concurrent: 'concurrent',
  tokensPerDay: 'tokensPerDay',
  tokensPerMonth: 'tokensPerMonth',
};

export class KeyLimiter {
  private readonly refusals = new Map<string, Map<LimitName, number>>();
  private readonly storeFailures: Record<StoreFailureOutcome, number> = { allowed: 0, refused: 0, unsettled: 0 };
  private storeReachable = true;

  private readonly replica: ReplicaLimits;
  /** The store shared by replicas; undefined with the memory store, where this replica's count is all. */
  private readonly shared: RedisLimitStore | undefined;
  /** The memory store's database: the quotas' counts and the usage history (issue 37). */
  private readonly database: Database | undefined;
  /** The usage history the console charts, kept where the limits are (issue 37). */
  readonly usageHistory: UsageHistoryStore;

  /**
   * `store`: Redis, shared by replicas, with this replica's own count beside it; or, with the
   * memory store, the database that keeps this replica's quota counts and usage history (the
   * data folder's, or one in memory).
   */
  constructor(
    store: RedisLimitStore | Database,
    private readonly onStoreError: LimitsConfig['onStoreError'],
    /** Where the store's state changes go: the log (observability/event-log.ts). */
    private readonly report: (event: LimitStoreEvent) => void,
  ) {
    if (store instanceof RedisLimitStore) {
      this.shared = store;
      this.replica = new ReplicaLimits();
      this.usageHistory = store.usageHistory;
    } else {
      this.database = store;
      this.replica = new ReplicaLimits(new SqliteQuotaLedger(store));
      this.usageHistory = new SqliteUsageHistory(store);
    }
  }

  /** `dataFolder`: where the memory store keeps its database; undefined: in memory (a program that embeds the service, the tests). */
  static fromConfig(
    config: LimitsConfig,
    dataFolder: string | undefined,
    report: (event: LimitStoreEvent) => void,
  ): KeyLimiter {
    const store =
      config.store.type === 'redis'
        ? new RedisLimitStore({
            url: config.store.url,
            keyPrefix: config.store.keyPrefix,
            timeoutMs: config.store.timeoutMs,
          })
        : openDatabase(dataFolder);
    return new KeyLimiter(store, config.onStoreError, report);
  }

  get stats(): LimiterStats {
    return { refusals: this.refusals, storeFailures: this.storeFailures, storeReachable: this.storeReachable };
  }

  /**
   * A request of `key` begins, before its body is read: the 429 when the key's requests in flight
   * on this replica are at its concurrency limit. Undefined for a key without limits. The charge
   * must be settled once the request ends, however it ends.
   */
  enter(key: ClientKey): LimitCharge | undefined {
    const limits = key.limits;
    if (limits === undefined) return undefined;
    if (!this.replica.enter(key.id, limits)) {
      const now = Date.now();
      throw this.refusal(key.id, limits, 0, {
        refusedBy: 'concurrent',
        retryAfterMs: CONCURRENT_RETRY_MS,
        readings: this.replica.readings(key.id, limits, now),
        quotas: this.replica.quotaReadings(key.id, limits, now),
        lease: undefined,
      });
    }
    return new LimitCharge(this, key.id, limits);
  }

  /** LimitCharge.admit: checks and charges the key's limits for `inputTokens`; throws the 429 when one is reached. */
  async admit(charge: LimitCharge, inputTokens: number): Promise<void> {
    const { keyId, limits } = charge;
    const local = this.replica.admit(keyId, limits, inputTokens, Date.now());
    if (local.refusedBy !== undefined) throw this.refusal(keyId, limits, inputTokens, local);
    if (this.shared === undefined) return charge.admitted(undefined, local);
    let shared: Admission;
    try {
      shared = await this.shared.admit(keyId, limits, inputTokens);
    } catch (error) {
      this.storeUnreachable(error);
      if (this.onStoreError === 'allow') {
        this.storeFailures.allowed += 1;
        return charge.admitted(undefined, local);
      }
      this.replica.refund(keyId, limits, inputTokens, Date.now());
      this.storeFailures.refused += 1;
      throw new ServiceError(
        'limits_unavailable',
        "this API key's limits cannot be checked now (their store does not answer); try again shortly",
        { retryAfterSeconds: 1, cause: error },
      );
    }
    this.storeAnswered();
    // Whatever Redis answered, this replica's quota counts rise to the shared ones, so that an
    // outage goes on from them rather than from what this replica alone admitted.
    this.replica.raiseQuotas(keyId, limits, shared.quotas, Date.now());
    if (shared.refusedBy !== undefined) {
      this.replica.refund(keyId, limits, inputTokens, Date.now());
      throw this.refusal(keyId, limits, inputTokens, shared);
    }
    charge.admitted(shared.lease, shared, true);
  }

  /**
   * The key's limits as they stand, charging nothing, for the console: Redis's with a shared
   * store (this replica's own when Redis does not answer), else this replica's.
   */
  async standing(key: ClientKey): Promise<KeyStanding & { source: 'shared' | 'replica' }> {
    const limits = key.limits;
    const now = Date.now();
    const replica = (): KeyStanding & { source: 'replica' } => ({
      readings: limits === undefined ? {} : this.replica.readings(key.id, limits, now),
      quotas: limits === undefined ? {} : this.replica.quotaReadings(key.id, limits, now),
      inFlight: this.replica.inFlight(key.id),
      source: 'replica',
    });
    if (this.shared === undefined || limits === undefined) return replica();
    try {
      return { ...(await this.shared.read(key.id, limits)), source: 'shared' };
    } catch {
      return replica();
    }
  }

  async close(): Promise<void> {
    this.database?.close();
    await this.shared?.close();
  }

  /** LimitCharge.settle: output tokens charged, the place in flight given back, here and in the shared store. */
  settle(charge: LimitCharge, outputTokens: number): Promise<void> {
    const { keyId, limits } = charge;
    this.replica.leave(keyId, limits);
    if (!charge.wasAdmitted) return Promise.resolve();
    this.replica.settle(keyId, limits, outputTokens, Date.now());
    if (this.shared === undefined || !charge.sharedAdmission) return Promise.resolve();
    return this.shared.settle(keyId, limits, outputTokens, charge.lease).then(
      () => this.storeAnswered(),
      (error: unknown) => {
        this.storeFailures.unsettled += 1;
        this.storeUnreachable(error);
      },
    );
  }

  /**
   * The 429 for a refused admission: with `retry-after` (for a quota, until its period ends), or
   * without when the input alone is over the limit or the whole quota.
   */
  private refusal(keyId: string, limits: KeyLimits, inputTokens: number, refused: Admission): ServiceError {
    const refusedBy = refused.refusedBy!;
    this.countRefusal(keyId, refusedBy);
    const headers = rateLimitHeaders(refused.readings, refused.quotas);
    const isQuota = refusedBy === 'tokensPerDay' || refusedBy === 'tokensPerMonth';
    const allowance = `this API key's ${isQuota ? 'quota' : 'limit'} of ${limits[LIMIT_FIELDS[refusedBy]]!} ${LIMIT_WORDS[refusedBy]}`;
    if (refused.retryAfterMs === undefined)
      return new ServiceError(
        'rate_limited',
        `this request's ${inputTokens} input tokens are more than ${allowance}: shorten the prompt`,
        // No wait makes it fit: clients that retry 429s would send it again for nothing.
        { headers, shouldRetry: false },
      );
    const retryAfterSeconds = Math.max(1, Math.ceil(refused.retryAfterMs / 1000));
    if (!isQuota)
      return new ServiceError('rate_limited', `${allowance} is reached; retry after ${retryAfterSeconds} s`, {
        retryAfterSeconds,
        headers,
      });
    const startsAgain = new Date(Date.now() + refused.retryAfterMs).toISOString().slice(0, 19);
    return new ServiceError(
      'rate_limited',
      `${allowance} is used up; it starts again at ${startsAgain}Z (retry after ${retryAfterSeconds} s)`,
      { retryAfterSeconds, headers },
    );
  }

  private storeUnreachable(error: unknown): void {
    if (!this.storeReachable) return;
    this.storeReachable = false;
    const detail = error instanceof Error ? error.message : String(error);
    this.report({ type: 'limit-store', state: 'unreachable', onStoreError: this.onStoreError, detail });
  }

  private storeAnswered(): void {
    if (this.storeReachable) return;
    this.storeReachable = true;
    this.report({ type: 'limit-store', state: 'reachable', onStoreError: this.onStoreError, detail: undefined });
  }

  private countRefusal(keyId: string, limit: LimitName): void {
    let byLimit = this.refusals.get(keyId);
    if (byLimit === undefined) {
      byLimit = new Map();
      this.refusals.set(keyId, byLimit);
    }
    byLimit.set(limit, (byLimit.get(limit) ?? 0) + 1);
  }
}

/** A request's charge against its key's limits, from its first byte until its reply ends. */
export class LimitCharge {
  private settled = false;
  /** Set by the admission. */
  wasAdmitted = false;
  /** The shared store admitted the request too, so it settles there as well. */
  sharedAdmission = false;
  lease: string | undefined;
  /** The `anthropic-ratelimit-*` headers, as the buckets stand after this request's charge. */
  headers: Readonly<Record<string, string>> = {};

  constructor(
    private readonly limiter: KeyLimiter,
    readonly keyId: string,
    readonly limits: KeyLimits,
  ) {}

  /** Checks and charges the key's limits for a prompt of `inputTokens`; throws the 429 (or 503) that refuses it. */
  admit(inputTokens: number): Promise<void> {
    return this.limiter.admit(this, inputTokens);
  }

  /** KeyLimiter's record of an admission. */
  admitted(lease: string | undefined, admission: Admission, shared = false): void {
    this.wasAdmitted = true;
    this.sharedAdmission = shared;
    this.lease = lease;
    this.headers = rateLimitHeaders(admission.readings, admission.quotas);
  }

  /**
   * Once; a second call does nothing, so that every way out of a request may call it. Nothing
   * waits for it on a request's path; the promise (never rejected: a failure is counted) is for
   * a benchmark that times the admission alone.
   */
  settle(outputTokens: number): Promise<void> {
    if (this.settled) return Promise.resolve();
    this.settled = true;
    return this.limiter.settle(this, outputTokens);
  }
}
