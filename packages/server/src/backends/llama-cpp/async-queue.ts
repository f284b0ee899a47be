/**
 * Bridges node-llama-cpp's callbacks to an async iterator: the generation pushes items as they
 * come, the consumer pulls them; `end` and `fail` close it. Items are never dropped.
 */
export class AsyncQueue<Item> implements AsyncIterable<Item> {
  private readonly items: Item[] = [];
  private waiting: (() => void) | undefined;
  private ended = false;
  private failure: { error: unknown } | undefined;

  push(item: Item): void {
    this.items.push(item);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(error: unknown): void {
    this.failure = { error };
    this.wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    while (true) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.failure) throw this.failure.error;
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}
