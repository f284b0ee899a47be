/**
 * The usage history in Redis (usage-history.ts), beside the limits: one hash per bucket
 * (`<prefix>usage:minute:<bucket start>`), a field per key id, model and count, each replica adding
 * what it counted with HINCRBY, so that the buckets hold every replica's sum. A write is one
 * pipeline every few seconds per replica; a read, one pipeline of a range's buckets.
 */
import type { Redis } from 'ioredis';
import {
  bucketOf,
  firstBucket,
  USAGE_COUNTS,
  USAGE_RANGES,
  USAGE_SPANS,
  type KeyModelUsage,
  type UsageBucket,
  type UsageCounts,
  type UsageHistoryStore,
  type UsageRange,
} from './usage-history.js';

/** Between a key id, a model and a count's name in a field: none of them holds a line break. */
const SEPARATOR = '\n';

export class RedisUsageHistory implements UsageHistoryStore {
  constructor(
    private readonly connection: () => Promise<Redis>,
    private readonly keyPrefix: string,
    /** The store's reply watch (reply-watch.ts): a Redis that stays silent fails the call rather than holding it. */
    private readonly within: <Value>(reply: Promise<Value>) => Promise<Value>,
  ) {}

  async add(at: number, usage: readonly KeyModelUsage[]): Promise<void> {
    const client = await this.connection();
    const pipeline = client.pipeline();
    for (const { span, spanMs, keptMs } of USAGE_SPANS) {
      const bucket = bucketOf(at, spanMs);
      const key = this.bucketKey(span, bucket);
      for (const row of usage)
        for (const count of USAGE_COUNTS)
          if (row[count] !== 0) pipeline.hincrby(key, [row.keyId, row.model, count].join(SEPARATOR), row[count]);
      pipeline.pexpireat(key, bucket + spanMs + keptMs);
    }
    const results = await this.within(pipeline.exec());
    const failure = results?.find(([error]) => error !== null)?.[0];
    if (failure) throw failure;
  }

  async read(range: UsageRange, now: number): Promise<UsageBucket[]> {
    const { span, spanMs } = USAGE_RANGES[range];
    const client = await this.connection();
    const buckets: number[] = [];
    for (let bucket = firstBucket(range, now); bucket <= now; bucket += spanMs) buckets.push(bucket);
    const pipeline = client.pipeline();
    for (const bucket of buckets) pipeline.hgetall(this.bucketKey(span, bucket));
    const results = (await this.within(pipeline.exec())) ?? [];
    const rows: UsageBucket[] = [];
    results.forEach(([error, fields], index) => {
      if (error) throw error;
      const byKeyModel = new Map<string, UsageBucket>();
      for (const [field, value] of Object.entries(fields as Record<string, string>)) {
        const [keyId, model, count] = field.split(SEPARATOR) as [string, string, keyof UsageCounts];
        const id = `${keyId}${SEPARATOR}${model}`;
        let row = byKeyModel.get(id);
        if (row === undefined) {
          row = {
            bucket: buckets[index]!,
            keyId,
            model,
            requests: 0,
            inputTokens: 0,
            outputTokens: 0,
            cacheReadInputTokens: 0,
          };
          byKeyModel.set(id, row);
        }
        if (USAGE_COUNTS.includes(count)) row[count] = Number(value);
      }
      rows.push(...byKeyModel.values());
    });
    return rows;
  }

  private bucketKey(span: string, bucket: number): string {
    return `${this.keyPrefix}usage:${span}:${bucket}`;
  }
}
