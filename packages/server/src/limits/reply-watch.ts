/**
 * When a command to the limits' store counts as unanswered (issue 31). ioredis's own
 * `commandTimeout` is a timer on this event loop: when a burst of requests keeps the loop busy
 * past the timeout, the timers fire before the loop reads the replies already waiting in the
 * socket, and every pending admission counted as "store unreachable" (300 requests at once on a
 * limit of 10 a minute admitted 27 under `"allow"`; under `"refuse"` 99 of 300 got a 503 from a
 * healthy Redis). Here a command fails only once its connection has been silent for `timeoutMs`
 * while the command waited, judged after the loop has read what its sockets hold: the timer only
 * asks for a look from `setImmediate`, which runs after the poll phase of the same turn.
 */
import { performance } from 'node:perf_hooks';

export class StoreTimeoutError extends Error {}

export class ReplyWatch {
  /** When the connection last delivered bytes (performance.now()). */
  private lastHeardAt = 0;

  constructor(private readonly timeoutMs: number) {}

  /** Called for every chunk the connection reads. */
  heard(): void {
    this.lastHeardAt = performance.now();
  }

  /**
   * `reply`, or a StoreTimeoutError once the connection has been silent for the timeout while it
   * waited. A reply that comes after that goes to `late`, so that what the command did can be
   * taken back.
   */
  within<Value>(reply: Promise<Value>, late: (value: Value) => void): Promise<Value> {
    const sentAt = performance.now();
    return new Promise<Value>((resolve, reject) => {
      let timedOut = false;
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      reply.then(
        (value) => {
          if (timedOut) return late(value);
          done = true;
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          if (timedOut) return;
          done = true;
          clearTimeout(timer);
          reject(error);
        },
      );
      const look = (): void => {
        setImmediate(() => {
          if (done) return;
          const silentFor = performance.now() - Math.max(sentAt, this.lastHeardAt);
          if (silentFor < this.timeoutMs) {
            timer = setTimeout(look, this.timeoutMs - silentFor);
            return;
          }
          timedOut = true;
          done = true;
          reject(new StoreTimeoutError(`the limits' store sent nothing for ${this.timeoutMs} ms`));
        });
      };
      timer = setTimeout(look, this.timeoutMs);
    });
  }
}
