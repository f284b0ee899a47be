/**
 * Writes the framework's replies at the end of the event loop's turn, all together, instead of
 * each one as soon as it is ready.
 *
 * Why: writing to a socket whose reader sleeps wakes the reader, and that wake-up is paid by
 * the writer, inside its `writev`. When the service is busier than its clients (a load
 * balancer, a proxy or a load generator that sits waiting for answers), a reply written the
 * moment it is ready wakes the client once per reply; the client answers it, sends its next
 * request and sleeps again before the next reply is done. Replies written back to back at the
 * end of the turn wake it once for the batch: the rest reach a client that is already running.
 * On a 2-core VM this cut the kernel time of each `writev` from about 41 µs to 10 µs and raised
 * `npm run bench` from 9,000 to about 15,000 requests/s (docs/benchmarks.md). A reply waits
 * for at most the rest of the turn it was finished in: the other requests that arrived with it.
 *
 * setImmediate runs after the poll phase has handled every socket that was ready, so one turn's
 * replies are one batch.
 */
export class ReplyBatching {
  private waiting: Array<() => void> = [];

  /** `reportError` hears of a write that threw; the writes after it still go out. */
  constructor(private readonly reportError: (error: unknown) => void) {}

  /** Writes deferred and not yet run. */
  get pending(): boolean {
    return this.waiting.length > 0;
  }

  /** Runs `write` at the end of this turn of the event loop, after the writes deferred before it. */
  defer(write: () => void): void {
    this.waiting.push(write);
    if (this.waiting.length === 1) setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    const writes = this.waiting;
    this.waiting = [];
    for (const write of writes) {
      try {
        write();
      } catch (error) {
        this.reportError(error);
      }
    }
  };
}
