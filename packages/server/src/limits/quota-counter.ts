/**
 * The keys' quotas as this replica counts them (issue 37): input and output tokens per UTC day
 * and month. The arithmetic is a sum per period, not a bucket: a request is admitted while the
 * period's count plus its input tokens leaves room for one output token (as the output bucket
 * asks for one token: issue 20), its input is charged then, and its output once the reply ends,
 * so the last request of a period may take the count past the quota by what it generates. Past
 * the quota the wait is until the period ends; a prompt over the whole quota never fits.
 *
 * With the memory store the counts are written through to the data folder's database (the
 * ledger), and read from it when a key's period is first met, so that a restart loses none. With
 * Redis the shared counts are Redis's; this one is the replica's own beside it (key-limiter.ts),
 * raised to what Redis last said, so that an outage goes on from the shared count.
 */
import type { KeyLimits } from '../keys/client-key.js';
import { currentPeriod, QUOTAS, type QuotaName } from './quota-period.js';

/** Where a replica's quota counts outlive it: the data folder's database (sqlite-quota-ledger.ts). */
export interface QuotaLedger {
  /** The tokens counted in the key's period so far. */
  used(keyId: string, quota: QuotaName, period: string): number;
  /** Adds `tokens` to the key's count for the period; negative for a refund. */
  add(keyId: string, quota: QuotaName, period: string, tokens: number): void;
}

/** One quota as a reply's headers and the console tell it. */
export interface QuotaReading {
  limit: number;
  used: number;
  remaining: number;
  /** When the period ends and the count starts again, epoch milliseconds. */
  resetsAt: number;
}

export type QuotaReadings = Partial<Record<QuotaName, QuotaReading>>;

export interface QuotaRefusal {
  refusedBy: QuotaName;
  /** Until the period ends; undefined when the input alone is over the quota. */
  retryAfterMs: number | undefined;
}

interface PeriodCount {
  period: string;
  used: number;
}

export class QuotaCounter {
  /** By key id, then quota: only configured keys with quotas come here. */
  private readonly counts = new Map<string, Partial<Record<QuotaName, PeriodCount>>>();

  constructor(private readonly ledger: QuotaLedger | undefined) {}

  /** The quota that refuses a prompt of `inputTokens` now, the longest wait first; undefined when all have room. */
  refusal(keyId: string, limits: KeyLimits, inputTokens: number, now: number): QuotaRefusal | undefined {
    let refusal: QuotaRefusal | undefined;
    for (const quota of QUOTAS) {
      const limit = limits[quota];
      if (limit === undefined) continue;
      if (inputTokens + 1 > limit) return { refusedBy: quota, retryAfterMs: undefined };
      if (this.count(keyId, quota, now).used + inputTokens + 1 <= limit) continue;
      const wait = currentPeriod(quota, now).endsAt - now;
      if (refusal === undefined || wait > refusal.retryAfterMs!) refusal = { refusedBy: quota, retryAfterMs: wait };
    }
    return refusal;
  }

  /** Adds `tokens` to every quota the key has, in the period of `now`; negative takes back, never below zero. */
  charge(keyId: string, limits: KeyLimits, tokens: number, now: number): void {
    if (tokens === 0) return;
    for (const quota of QUOTAS) {
      if (limits[quota] === undefined) continue;
      const count = this.count(keyId, quota, now);
      const added = Math.max(tokens, -count.used);
      count.used += added;
      this.ledger?.add(keyId, quota, count.period, added);
    }
  }

  /** What the shared store counted: this replica's count rises to it, never falls (a refund is its own). */
  raise(keyId: string, limits: KeyLimits, shared: QuotaReadings, now: number): void {
    for (const quota of QUOTAS) {
      const reading = shared[quota];
      if (limits[quota] === undefined || reading === undefined) continue;
      const count = this.count(keyId, quota, now);
      count.used = Math.max(count.used, reading.used);
    }
  }

  readings(keyId: string, limits: KeyLimits, now: number): QuotaReadings {
    const readings: QuotaReadings = {};
    for (const quota of QUOTAS) {
      const limit = limits[quota];
      if (limit !== undefined) readings[quota] = quotaReading(limit, this.count(keyId, quota, now).used, quota, now);
    }
    return readings;
  }

  /** The key's count for the period of `now`: a new period starts from what the ledger holds of it. */
  private count(keyId: string, quota: QuotaName, now: number): PeriodCount {
    let byQuota = this.counts.get(keyId);
    if (byQuota === undefined) {
      byQuota = {};
      this.counts.set(keyId, byQuota);
    }
    const period = currentPeriod(quota, now).id;
    let count = byQuota[quota];
    if (count === undefined || count.period !== period) {
      count = { period, used: this.ledger?.used(keyId, quota, period) ?? 0 };
      byQuota[quota] = count;
    }
    return count;
  }
}

export function quotaReading(limit: number, used: number, quota: QuotaName, now: number): QuotaReading {
  return { limit, used, remaining: Math.max(0, limit - used), resetsAt: currentPeriod(quota, now).endsAt };
}
