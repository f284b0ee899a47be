/**
 * Writes the service's messages to the sandbox's stdin: the program once, then an answer per
 * host function call. A child whose code never reads its stdin (busy in Python, or forging
 * calls on purpose) fills the pipe, and every later write would wait in this stream's buffer,
 * in the service's memory: four such executions once held 1.7 GB there. So the unread backlog
 * is capped: a message that would take it past MAX_UNREAD_BYTES is a breach instead of a write.
 *
 * One message of any size may go when nothing is waiting, because an honest answer can be a
 * whole fetched page; the cap bounds what piles up behind it. Honest code reads its answers as
 * they come (it is awaiting them), so its backlog drains as fast as the pipe moves.
 */
import type { Writable } from 'node:stream';

/** Bytes written to the child and not yet taken by it that the service holds at most. */
export const MAX_UNREAD_BYTES = 1 << 20;

export class AnswerWriter {
  private closed = false;

  constructor(
    private readonly stream: Writable,
    private readonly onBreach: (why: string) => void,
  ) {}

  send(message: unknown): void {
    if (this.closed) return;
    const line = Buffer.from(`${JSON.stringify(message)}\n`);
    // Bytes of the earlier messages still in the stream's buffer: the kernel's pipe has taken
    // what it can hold, so this is what the child has not read.
    const unread = this.stream.writableLength;
    if (unread > 0 && unread + line.length > MAX_UNREAD_BYTES) {
      this.close();
      this.onBreach(`more than ${MAX_UNREAD_BYTES} bytes of answers left unread`);
      return;
    }
    this.stream.write(line);
  }

  /** Nothing more is written: the child is gone or being killed. */
  close(): void {
    this.closed = true;
  }
}
