/**
 * The usage history of a service with the memory store (usage-history.ts), in the data folder's
 * database: a row per span, bucket, key id and model. A write is one transaction every few
 * seconds, which also drops the buckets past their keeping.
 */
import type { Database } from './sqlite-database.js';
import {
  bucketOf,
  firstBucket,
  USAGE_RANGES,
  USAGE_SPANS,
  type KeyModelUsage,
  type UsageBucket,
  type UsageHistoryStore,
  type UsageRange,
} from './usage-history.js';

export class SqliteUsageHistory implements UsageHistoryStore {
  private readonly write: (at: number, usage: readonly KeyModelUsage[]) => void;
  private readonly select;

  constructor(database: Database) {
    const upsert = database.prepare<[string, number, string, string, number, number, number, number]>(
      `INSERT INTO usage_history (span, bucket, key_id, model, requests, input_tokens, output_tokens, cache_read_input_tokens)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (span, bucket, key_id, model) DO UPDATE SET
         requests = requests + excluded.requests,
         input_tokens = input_tokens + excluded.input_tokens,
         output_tokens = output_tokens + excluded.output_tokens,
         cache_read_input_tokens = cache_read_input_tokens + excluded.cache_read_input_tokens`,
    );
    const prune = database.prepare<[string, number]>('DELETE FROM usage_history WHERE span = ? AND bucket < ?');
    this.write = database.transaction((at: number, usage: readonly KeyModelUsage[]) => {
      for (const { span, spanMs, keptMs } of USAGE_SPANS) {
        const bucket = bucketOf(at, spanMs);
        for (const row of usage)
          upsert.run(
            span,
            bucket,
            row.keyId,
            row.model,
            row.requests,
            row.inputTokens,
            row.outputTokens,
            row.cacheReadInputTokens,
          );
        prune.run(span, bucket - keptMs);
      }
    });
    this.select = database.prepare<
      [string, number],
      {
        bucket: number;
        key_id: string;
        model: string;
        requests: number;
        input_tokens: number;
        output_tokens: number;
        cache_read_input_tokens: number;
      }
    >(
      `SELECT bucket, key_id, model, requests, input_tokens, output_tokens, cache_read_input_tokens
       FROM usage_history WHERE span = ? AND bucket >= ? ORDER BY bucket, key_id, model`,
    );
  }

  async add(at: number, usage: readonly KeyModelUsage[]): Promise<void> {
    this.write(at, usage);
  }

  async read(range: UsageRange, now: number): Promise<UsageBucket[]> {
    return this.select.all(USAGE_RANGES[range].span, firstBucket(range, now)).map((row) => ({
      bucket: row.bucket,
      keyId: row.key_id,
      model: row.model,
      requests: row.requests,
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      cacheReadInputTokens: row.cache_read_input_tokens,
    }));
  }
}
