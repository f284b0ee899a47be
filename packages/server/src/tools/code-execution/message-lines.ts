/**
 * Splits the sandbox's message channel into JSON lines. The other end runs untrusted code that
 * can write anything to it, so this reader holds at most one line's worth of bytes: a line
 * longer than the cap, or one that is not JSON, is a breach (the caller kills the sandbox)
 * instead of a buffer that grows until the service runs out of memory. After a breach, or once
 * the caller stops it (a kill for any reason), nothing more is parsed: the rest of a flood
 * already read costs the service nothing.
 */
const NEWLINE = 0x0a;

export class MessageLines {
  /** The start of a line whose end has not come yet, at most maxLineBytes in all. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private stopped = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onMessage: (message: unknown) => void,
    private readonly onBreach: (why: string) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (!this.stopped) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline === -1) break;
      const line = this.lineEndingWith(chunk.subarray(start, newline));
      start = newline + 1;
      if (line !== undefined) this.deliver(line);
    }
    if (this.stopped || start === chunk.length) return;
    const rest = chunk.subarray(start);
    if (!this.fits(rest.length)) return;
    // A copy, so that a line's first bytes do not hold the whole chunk they came in.
    this.pending.push(Buffer.from(rest));
    this.pendingBytes += rest.length;
  }

  /** Nothing more is parsed or delivered. */
  stop(): void {
    this.stopped = true;
    this.pending = [];
    this.pendingBytes = 0;
  }

  private lineEndingWith(end: Buffer): Buffer | undefined {
    if (!this.fits(end.length)) return undefined;
    const line = this.pendingBytes === 0 ? end : Buffer.concat([...this.pending, end]);
    this.pending = [];
    this.pendingBytes = 0;
    return line;
  }

  private fits(moreBytes: number): boolean {
    if (this.pendingBytes + moreBytes <= this.maxLineBytes) return true;
    this.breach(`a message longer than ${this.maxLineBytes} bytes`);
    return false;
  }

  private deliver(line: Buffer): void {
    if (line.length === 0) return;
    let message: unknown;
    try {
      message = JSON.parse(line.toString('utf8'));
    } catch {
      this.breach('a message that is not JSON');
      return;
    }
    this.onMessage(message);
  }

  private breach(why: string): void {
    this.stop();
    this.onBreach(why);
  }
}
