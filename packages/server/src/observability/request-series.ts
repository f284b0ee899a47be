/**
 * The counts the metrics keep between scrapes (service-metrics.ts): the request series, one per
 * set of label values, found at a request's end through one map level per label; counts by label
 * set for the rest; and the series summed into fewer labels when /metrics is read.
 */
import { BucketCounts } from './bucket-counts.js';
import type { LabelledCounts } from './collected-histogram.js';

/** Seconds; requests run from milliseconds (a refusal) to minutes (a research turn with server tools). */
export const DURATION_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Seconds from arrival to the backend's first output: the queue and the prefill. */
export const FIRST_TOKEN_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Requests that share every label: counted together, so that a request's end adds to one series. */
export interface RequestSeries {
  labels: { route: string; key: string; model: string; backend: string; status: string; code: string };
  requests: number;
  duration: BucketCounts;
  firstToken: BucketCounts;
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

export type Labels = Record<string, string>;

/**
 * The request series by their label values, one map level per label: a request's end finds its
 * series without building a key string (the values are the same strings each time, whose hashes
 * V8 keeps; a joined key was a new string to hash on every request, about a microsecond).
 */
export class SeriesIndex {
  private readonly root = new Map<
    string,
    Map<string, Map<string, Map<string, Map<number, Map<string, RequestSeries>>>>>
  >();

  find(route: string, key: string, model: string, backend: string, status: number, code: string): RequestSeries {
    const byKey = child(this.root, route);
    const byModel = child(byKey, key);
    const byBackend = child(byModel, model);
    const byStatus = child(byBackend, backend);
    const byCode = child(byStatus, status);
    let series = byCode.get(code);
    if (series === undefined) {
      series = {
        labels: { route, key, model, backend, status: String(status), code },
        requests: 0,
        duration: new BucketCounts(DURATION_BOUNDS),
        firstToken: new BucketCounts(FIRST_TOKEN_BOUNDS),
        inputTokens: 0,
        outputTokens: 0,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
      };
      byCode.set(code, series);
    }
    return series;
  }

  all(): RequestSeries[] {
    const all: RequestSeries[] = [];
    for (const byKey of this.root.values())
      for (const byModel of byKey.values())
        for (const byBackend of byModel.values())
          for (const byStatus of byBackend.values())
            for (const byCode of byStatus.values()) all.push(...byCode.values());
    return all;
  }
}

function child<Key, Value extends Map<unknown, unknown>>(map: Map<Key, Value>, key: Key): Value {
  let found = map.get(key);
  if (found === undefined) {
    found = new Map() as Value;
    map.set(key, found);
  }
  return found;
}

/** Counts by label set, for the events and the per-request counts that are not a request's series. */
export class CountTable {
  private readonly rows = new Map<string, { labels: Labels; value: number }>();

  add(labels: Labels, amount = 1): void {
    const key = Object.values(labels).join('\n');
    const row = this.rows.get(key);
    if (row) row.value += amount;
    else this.rows.set(key, { labels, value: amount });
  }

  values(): Iterable<{ labels: Labels; value: number }> {
    return this.rows.values();
  }
}

/** Request series summed into fewer labels, as a histogram's series. */
export function sumBy(
  series: readonly RequestSeries[],
  labelNames: ReadonlyArray<keyof RequestSeries['labels']>,
  counts: (one: RequestSeries) => BucketCounts,
  bounds: readonly number[],
): LabelledCounts[] {
  const sums = new Map<string, LabelledCounts>();
  for (const one of series) {
    const own = counts(one);
    if (own.count === 0) continue;
    const labels = pick(one.labels, labelNames);
    const key = Object.values(labels).join('\n');
    let sum = sums.get(key);
    if (sum === undefined) {
      sum = { labels, counts: new BucketCounts(bounds) };
      sums.set(key, sum);
    }
    sum.counts.add(own);
  }
  return [...sums.values()];
}

/** Request series summed into fewer labels, as a counter's series; series that never counted are left out. */
export function sumValues(
  series: readonly RequestSeries[],
  labelNames: ReadonlyArray<keyof RequestSeries['labels']>,
  value: (one: RequestSeries) => number,
): Iterable<{ labels: Labels; value: number }> {
  const table = new CountTable();
  for (const one of series) if (value(one) > 0) table.add(pick(one.labels, labelNames), value(one));
  return table.values();
}

function pick(labels: RequestSeries['labels'], names: ReadonlyArray<keyof RequestSeries['labels']>): Labels {
  return Object.fromEntries(names.map((name) => [name, labels[name]]));
}
