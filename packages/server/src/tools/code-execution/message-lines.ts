/**
 * Splits the sandbox's message channel into JSON lines. The other end runs untrusted code that
 * can write anything to it, so a line longer than the cap is a breach (the caller kills the
 * sandbox) instead of a buffer that grows until the service runs out of memory.
 */
export class MessageLines {
  private pending = '';
  private broken = false;

  constructor(
    private readonly maxLineCharacters: number,
    private readonly onMessage: (message: unknown) => void,
    private readonly onBreach: (why: string) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.broken) return;
    this.pending += chunk.toString('utf8');
    let newline = this.pending.indexOf('\n');
    while (newline !== -1) {
      const line = this.pending.slice(0, newline);
      this.pending = this.pending.slice(newline + 1);
      if (!this.deliver(line)) return;
      newline = this.pending.indexOf('\n');
    }
    if (this.pending.length > this.maxLineCharacters)
      this.breach(`a message longer than ${this.maxLineCharacters} characters`);
  }

  private deliver(line: string): boolean {
    if (line.length > this.maxLineCharacters)
      return this.breach(`a message longer than ${this.maxLineCharacters} characters`);
    if (line === '') return true;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return this.breach('a message that is not JSON');
    }
    this.onMessage(message);
    return !this.broken;
  }

  private breach(why: string): false {
    this.broken = true;
    this.pending = '';
    this.onBreach(why);
    return false;
  }
}
