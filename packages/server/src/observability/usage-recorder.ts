/**
 * Writes what this replica counted to the usage history the console charts (issue 37;
 * limits/usage-history.ts), every WRITE_EVERY_MS and when the app closes. What it writes is read
 * from the metrics' own counts per key and model (service-metrics.ts, which a request's end
 * already adds to), less what was written before: a request pays nothing more for its history.
 * A write that fails (Redis away) is kept and added to the next.
 */
import type { KeyModelUsage, UsageHistoryStore } from '../limits/usage-history.js';
import type { ServiceMetrics } from './service-metrics.js';

/** How often the counts are written: the latest bucket of a chart trails by at most this. */
export const WRITE_EVERY_MS = 10_000;

export class UsageRecorder {
  /** The counts as last written, by key id and model. */
  private readonly written = new Map<string, KeyModelUsage>();
  private writing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly metrics: ServiceMetrics,
    private readonly store: UsageHistoryStore,
    private readonly onFailure: (error: unknown) => void,
  ) {
    this.timer = setInterval(() => void this.write(), WRITE_EVERY_MS).unref();
  }

  /** Writes what was counted since the last write; one write at a time, in order. */
  write(): Promise<void> {
    this.writing = this.writing.then(() => this.writeNow());
    return this.writing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.write();
  }

  private async writeNow(): Promise<void> {
    const counted = this.metrics.usage();
    const added: KeyModelUsage[] = [];
    for (const row of counted) {
      const id = `${row.keyId}\n${row.model}`;
      const before = this.written.get(id);
      const delta = {
        keyId: row.keyId,
        model: row.model,
        requests: row.requests - (before?.requests ?? 0),
        inputTokens: row.inputTokens - (before?.inputTokens ?? 0),
        outputTokens: row.outputTokens - (before?.outputTokens ?? 0),
        cacheReadInputTokens: row.cacheReadInputTokens - (before?.cacheReadInputTokens ?? 0),
      };
      if (delta.requests !== 0 || delta.inputTokens !== 0 || delta.outputTokens !== 0) added.push(delta);
    }
    if (added.length === 0) return;
    try {
      await this.store.add(Date.now(), added);
      for (const row of counted) this.written.set(`${row.keyId}\n${row.model}`, row);
    } catch (error) {
      // Nothing is marked written: the next write carries these counts too.
      this.onFailure(error);
    }
  }
}
