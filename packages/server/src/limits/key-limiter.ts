/**
 * The keys' limits on a message request (issue 20): checked and charged once the prompt is
 * counted and before the request is admitted to its model, so that a refused request costs no
 * queue place and no generation; settled when its reply ends, with the output tokens it
 * generated (a stream cut short pays what it produced). Past a limit: 429 rate_limit_error with
 * `retry-after` and the `anthropic-ratelimit-*` headers, which successful replies carry too.
 *
 * A store that fails (Redis unreachable, or slower than its timeout) is `limits.onStoreError`'s
 * case: "allow" serves the request without limits (and without the headers), "refuse" answers
 * 503 limits_unavailable. Each such request is counted (mms_limit_store_failures_total); the
 * log says when the store became unreachable and when it answered again, not once per request.
 */
import { ServiceError } from '@model-messages/protocol';
import type { LimitsConfig } from '../config/key-config.js';
import type { KeyLimits } from '../keys/client-key.js';
import type { ServiceEvent } from '../observability/service-events.js';
import type { LimitStore } from './limit-store.js';
import { MemoryLimitStore } from './memory-limit-store.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { RedisLimitStore } from './redis-limit-store.js';
import { BUCKET_LIMITS, type LimitName } from './token-bucket.js';

/** What a store failure did to a request: served without limits, refused, or a settling lost. */
export type StoreFailureOutcome = 'allowed' | 'refused' | 'unsettled';

/** Counts the metrics read when /metrics is scraped (observability/service-metrics.ts). */
export interface LimiterStats {
  /** Requests refused, by key id and limit. */
  readonly refusals: ReadonlyMap<string, ReadonlyMap<LimitName, number>>;
  readonly storeFailures: Readonly<Record<StoreFailureOutcome, number>>;
}

const LIMIT_WORDS: Readonly<Record<LimitName, string>> = {
  requests: 'requests per minute',
  inputTokens: 'input tokens per minute',
  outputTokens: 'output tokens per minute',
  concurrent: 'requests in flight',
};

export class KeyLimiter {
  private readonly refusals = new Map<string, Map<LimitName, number>>();
  private readonly storeFailures: Record<StoreFailureOutcome, number> = { allowed: 0, refused: 0, unsettled: 0 };
  private storeReachable = true;

  constructor(
    private readonly store: LimitStore,
    private readonly onStoreError: LimitsConfig['onStoreError'],
    /** Where the store's state changes go: the log (observability/event-log.ts). */
    private readonly report: (event: ServiceEvent) => void,
  ) {}

  static fromConfig(config: LimitsConfig, report: (event: ServiceEvent) => void): KeyLimiter {
    const store =
      config.store.type === 'redis'
        ? new RedisLimitStore({
            url: config.store.url,
            keyPrefix: config.store.keyPrefix,
            timeoutMs: config.store.timeoutMs,
          })
        : new MemoryLimitStore();
    return new KeyLimiter(store, config.onStoreError, report);
  }

  get stats(): LimiterStats {
    return { refusals: this.refusals, storeFailures: this.storeFailures };
  }

  /**
   * Checks and charges the key's limits for a request of `inputTokens`; throws the 429 when one
   * is reached. The charge it returns must be settled once the reply ends, however it ends.
   * Undefined: the store failed and the request is served without limits.
   */
  async admit(keyId: string, limits: KeyLimits, inputTokens: number): Promise<LimitCharge | undefined> {
    let admitted;
    try {
      admitted = await this.store.admit(keyId, limits, inputTokens);
    } catch (error) {
      return this.storeFailed(error);
    }
    this.storeAnswered();
    const headers = rateLimitHeaders(admitted.readings);
    const refusedBy = admitted.refusedBy;
    if (refusedBy === undefined) return new LimitCharge(this, keyId, limits, admitted.lease, headers);
    this.countRefusal(keyId, refusedBy);
    const limit = limits[refusedBy === 'concurrent' ? 'concurrent' : BUCKET_LIMITS[refusedBy]]!;
    if (admitted.retryAfterMs === undefined)
      throw new ServiceError(
        'rate_limited',
        `this request's ${inputTokens} input tokens are more than this API key's limit of ${limit} ${LIMIT_WORDS[refusedBy]}: shorten the prompt`,
        { headers },
      );
    const retryAfterSeconds = Math.max(1, Math.ceil(admitted.retryAfterMs / 1000));
    throw new ServiceError(
      'rate_limited',
      `this API key's limit of ${limit} ${LIMIT_WORDS[refusedBy]} is reached; retry after ${retryAfterSeconds} s`,
      { retryAfterSeconds, headers },
    );
  }

  close(): Promise<void> {
    return this.store.close();
  }

  /** The reply ended (LimitCharge.settle): output tokens charged, the place in flight given back. */
  settle(keyId: string, limits: KeyLimits, lease: string | undefined, outputTokens: number): Promise<void> {
    return this.store.settle(keyId, limits, outputTokens, lease).then(
      () => this.storeAnswered(),
      (error: unknown) => {
        this.storeFailures.unsettled += 1;
        this.storeUnreachable(error);
      },
    );
  }

  private storeFailed(error: unknown): undefined {
    this.storeUnreachable(error);
    if (this.onStoreError === 'allow') {
      this.storeFailures.allowed += 1;
      return undefined;
    }
    this.storeFailures.refused += 1;
    throw new ServiceError(
      'limits_unavailable',
      "this API key's limits cannot be checked now (their store does not answer); try again shortly",
      { retryAfterSeconds: 1, cause: error },
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

/** A request's charge, to settle once its reply ends; its headers go on the reply. */
export class LimitCharge {
  private settled = false;

  constructor(
    private readonly limiter: KeyLimiter,
    private readonly keyId: string,
    private readonly limits: KeyLimits,
    private readonly lease: string | undefined,
    /** The `anthropic-ratelimit-*` headers, as the buckets stand after this request's charge. */
    readonly headers: Readonly<Record<string, string>>,
  ) {}

  /**
   * Once; a second call does nothing, so that every way out of a request may call it. Nothing
   * waits for it on a request's path; the promise (never rejected: a failure is counted) is for
   * a benchmark that times the admission alone.
   */
  settle(outputTokens: number): Promise<void> {
    if (this.settled) return Promise.resolve();
    this.settled = true;
    return this.limiter.settle(this.keyId, this.limits, this.lease, outputTokens);
  }
}
