/**
 * Where `mms serve` writes its log: the lines of up to 50 ms written together, in one write (as
 * the replies of a turn of the event loop are, http/reply-batching.ts). Written one by one, each
 * access line cost its request a write call of its own, about 5 µs of the event loop's time on
 * a quiet machine (docs/benchmarks.md); a write per turn still cost one per request when requests
 * come one at a time, which on a virtual machine whose system calls trap to the host measured 70
 * to 90 µs of CPU a request (issue 36: `MMS_LOG_LEVEL=warn` against `info`, the gateway bench's
 * engine). 50 ms is well inside what a log shipper waits for, and 64 KB of lines go at once.
 *
 * pino's own destination does the writing, synchronously: it retries when a pipe is full and
 * stops at a closed one. What is held when the process exits (SIGTERM's exit included) is
 * written then, so only a SIGKILL loses lines, the last 50 ms of them at most.
 */
import { pino, type DestinationStream } from 'pino';

/** How long a line waits at most for the lines after it. */
const HOLD_MS = 50;
/** Held lines of this many characters are written at once, whatever the time. */
const HOLD_CHARACTERS = 64 * 1024;

export class BatchedLogDestination implements DestinationStream {
  private held: string[] = [];
  private heldCharacters = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly target: ReturnType<typeof pino.destination>;

  /** `destination`: a file descriptor (1, stdout) or a path. */
  constructor(destination: number | string) {
    this.target = pino.destination({ dest: destination, sync: true });
    process.on('exit', this.flush);
  }

  write(line: string): void {
    this.held.push(line);
    this.heldCharacters += line.length;
    if (this.heldCharacters >= HOLD_CHARACTERS) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(this.flush, HOLD_MS);
      // Held lines are no reason for the process to stay: its exit writes them.
      this.timer.unref();
    }
  }

  private readonly flush = (): void => {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.held.length === 0) return;
    const text = this.held.join('');
    this.held = [];
    this.heldCharacters = 0;
    this.target.write(text);
  };
}
