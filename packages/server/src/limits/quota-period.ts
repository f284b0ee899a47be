/**
 * The calendar periods of the keys' quotas (issue 37): a UTC day and a UTC month, each named by
 * its date (`2026-05-01`, `2026-05`) in the store's keys and rows, so that a new period starts at
 * zero by being a new name, and ending when the next one begins. Read on the replica's clock: a
 * skew between replicas moves only the requests at a period's edge to the next or the last.
 */
export const QUOTAS = ['tokensPerDay', 'tokensPerMonth'] as const;
export type QuotaName = (typeof QUOTAS)[number];

export interface QuotaPeriod {
  /** `2026-05-01` for a day, `2026-05` for a month. */
  id: string;
  /** When the next period begins, epoch milliseconds. */
  endsAt: number;
  /** When this one began. */
  startsAt: number;
}

/** The period each quota is in, kept until it ends: a request of a key with quotas reads it, and dates cost. */
const current: Partial<Record<QuotaName, QuotaPeriod>> = {};

export function currentPeriod(quota: QuotaName, now: number): QuotaPeriod {
  const known = current[quota];
  if (known !== undefined && now >= known.startsAt && now < known.endsAt) return known;
  const period = periodAt(quota, now);
  current[quota] = period;
  return period;
}

export function periodAt(quota: QuotaName, now: number): QuotaPeriod {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  if (quota === 'tokensPerDay') {
    const startsAt = Date.UTC(year, month, date.getUTCDate());
    return { id: new Date(startsAt).toISOString().slice(0, 10), startsAt, endsAt: startsAt + 86_400_000 };
  }
  const startsAt = Date.UTC(year, month, 1);
  return { id: new Date(startsAt).toISOString().slice(0, 7), startsAt, endsAt: Date.UTC(year, month + 1, 1) };
}
