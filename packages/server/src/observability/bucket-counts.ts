/**
 * A histogram's counts as the service keeps them: an observation is a bucket search over a
 * dozen bounds and three additions, with no label hashing (prom-client's own Histogram hashes
 * its labels on every observation, about 0.4 µs each). collected-histogram.ts reads them when
 * /metrics is scraped.
 */
export class BucketCounts {
  /**
   * Observations per bucket, not cumulative: `counts[i]` holds those above `bounds[i - 1]` and
   * at most `bounds[i]`; the last holds those above every bound.
   */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    let index = 0;
    while (index < this.bounds.length && value > this.bounds[index]!) index += 1;
    this.counts[index] = this.counts[index]! + 1;
    this.sum += value;
    this.count += 1;
  }

  /** Adds another's counts (same bounds): series summed into fewer labels when scraped. */
  add(other: BucketCounts): void {
    for (let index = 0; index < this.counts.length; index += 1)
      this.counts[index] = this.counts[index]! + other.counts[index]!;
    this.sum += other.sum;
    this.count += other.count;
  }
}
