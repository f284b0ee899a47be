/**
 * A Prometheus histogram whose counts the service keeps itself (bucket-counts.ts), read only
 * when /metrics is scraped. It is what prom-client's Registry reads of a metric (`get`, `reset`,
 * name, help, type), so it is exported in the same registry and text as prom-client's own.
 */
import type { Metric } from 'prom-client';
import type { BucketCounts } from './bucket-counts.js';

export interface LabelledCounts {
  labels: Record<string, string>;
  counts: BucketCounts;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

export class CollectedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    /** Every series with its labels, as of the scrape. */
    private readonly read: () => Iterable<LabelledCounts>,
  ) {}

  /** prom-client's Registry types its metrics as its own four classes; it reads only what this has. */
  asMetric(): Metric {
    return this as unknown as Metric;
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, counts } of this.read()) {
      let cumulative = 0;
      counts.bounds.forEach((bound, index) => {
        cumulative += counts.counts[index]!;
        values.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: counts.count, metricName: bucket });
      values.push({ labels, value: counts.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: counts.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The counts belong to the service: a registry's reset leaves them. */
  reset(): void {}
}
