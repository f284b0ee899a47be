/**
 * Where `mms serve` writes its log: the lines of one turn of the event loop, written together
 * once the turn is over, in one write (as the replies are, http/reply-batching.ts). Written one
 * by one, each access line cost its request a write call of its own, about 5 µs of the event
 * loop's time (docs/benchmarks.md); together, a turn's dozens of lines cost one.
 *
 * pino's own destination does the writing, synchronously: it retries when a pipe is full and
 * stops at a closed one. A line waits at most the rest of its turn; what is held when the
 * process exits (SIGTERM's exit included) is written then, so only a SIGKILL loses lines.
 */
import { pino, type DestinationStream } from 'pino';

export class BatchedLogDestination implements DestinationStream {
  private held: string[] = [];
  private readonly target: ReturnType<typeof pino.destination>;

  /** `destination`: a file descriptor (1, stdout) or a path. */
  constructor(destination: number | string) {
    this.target = pino.destination({ dest: destination, sync: true });
    process.on('exit', this.flush);
  }

  write(line: string): void {
    this.held.push(line);
    if (this.held.length === 1) setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    if (this.held.length === 0) return;
    const text = this.held.join('');
    this.held = [];
    this.target.write(text);
  };
}
