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
 */
import { ServiceError } from '@model-messages/protocol';
import type { LimitsConfig } from '../config/key-config.js';
import type { ClientKey, KeyLimits } from '../keys/client-key.js';
import type { LimitStoreEvent } from './limit-store-event.js';
import type { LimitStore } from './limit-store.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { RedisLimitStore } from './redis-limit-store.js';
import { ReplicaLimits } from './replica-limits.js';
import { BUCKET_LIMITS, CONCURRENT_RETRY_MS, type Admission, type LimitName } from './token-bucket.js';

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
};

export class KeyLimiter {
  private readonly replica = new ReplicaLimits();
  private readonly refusals = new Map<string, Map<LimitName, number>>();
  private readonly storeFailures: Record<StoreFailureOutcome, number> = { allowed: 0, refused: 0, unsettled: 0 };
  private storeReachable = true;

  constructor(
    /** The store shared by replicas; undefined with the memory store, where this replica's count is all. */
    private readonly shared: LimitStore | undefined,
    private readonly onStoreError: LimitsConfig['onStoreError'],
    /** Where the store's state changes go: the log (observability/event-log.ts). */
    private readonly report: (event: LimitStoreEvent) => void,
  ) {}

  static fromConfig(config: LimitsConfig, report: (event: LimitStoreEvent) => void): KeyLimiter {
    const shared =
      config.store.type === 'redis'
        ? new RedisLimitStore({
            url: config.store.url,
            keyPrefix: config.store.keyPrefix,
            timeoutMs: config.store.timeoutMs,
          })
        : undefined;
    return new KeyLimiter(shared, config.onStoreError, report);
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
      const readings = this.replica.readings(key.id, limits, Date.now());
      throw this.refusal(key.id, limits, 0, {
        refusedBy: 'concurrent',
        retryAfterMs: CONCURRENT_RETRY_MS,
        readings,
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
    if (shared.refusedBy !== undefined) {
      this.replica.refund(keyId, limits, inputTokens, Date.now());
      throw this.refusal(keyId, limits, inputTokens, shared);
    }
    charge.admitted(shared.lease, shared, true);
  }

  close(): Promise<void> {
    return this.shared?.close() ?? Promise.resolve();
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

  /** The 429 for a refused admission: with `retry-after`, or without when the input alone is over the limit. */
  private refusal(keyId: string, limits: KeyLimits, inputTokens: number, refused: Admission): ServiceError {
    const refusedBy = refused.refusedBy!;
    this.countRefusal(keyId, refusedBy);
    const headers = rateLimitHeaders(refused.readings);
    const limit = limits[refusedBy === 'concurrent' ? 'concurrent' : BUCKET_LIMITS[refusedBy]]!;
    if (refused.retryAfterMs === undefined)
      return new ServiceError(
        'rate_limited',
        `this request's ${inputTokens} input tokens are more than this API key's limit of ${limit} ${LIMIT_WORDS[refusedBy]}: shorten the prompt`,
        // No wait makes it fit: clients that retry 429s would send it again for nothing.
        { headers, shouldRetry: false },
      );
    const retryAfterSeconds = Math.max(1, Math.ceil(refused.retryAfterMs / 1000));
    return new ServiceError(
      'rate_limited',
      `this API key's limit of ${limit} ${LIMIT_WORDS[refusedBy]} is reached; retry after ${retryAfterSeconds} s`,
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
    this.headers = rateLimitHeaders(admission.readings);
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
