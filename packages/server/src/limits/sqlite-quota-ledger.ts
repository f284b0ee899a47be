/**
 * The quotas' counts of a service with the memory store, in the data folder's database
 * (sqlite-database.ts): each charge is one statement, written before the request goes on, so that
 * a restart, or the process being killed, keeps the count (issue 37).
 */
import type { QuotaLedger } from './quota-counter.js';
import type { QuotaName } from './quota-period.js';
import type { Database } from './sqlite-database.js';

export class SqliteQuotaLedger implements QuotaLedger {
  private readonly select;
  private readonly upsert;

  constructor(database: Database) {
    this.select = database.prepare<[string, string, string], { tokens: number }>(
      'SELECT tokens FROM quota_usage WHERE key_id = ? AND quota = ? AND period = ?',
    );
    this.upsert = database.prepare<[string, string, string, number]>(
      `INSERT INTO quota_usage (key_id, quota, period, tokens) VALUES (?, ?, ?, ?)
       ON CONFLICT (key_id, quota, period) DO UPDATE SET tokens = max(0, tokens + excluded.tokens)`,
    );
  }

  used(keyId: string, quota: QuotaName, period: string): number {
    return this.select.get(keyId, quota, period)?.tokens ?? 0;
  }

  add(keyId: string, quota: QuotaName, period: string, tokens: number): void {
    if (tokens !== 0) this.upsert.run(keyId, quota, period, tokens);
  }
}
