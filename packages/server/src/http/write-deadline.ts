/**
 * listen.writeTimeoutMs: a reply whose writes make no progress for that long is cut off. A client
 * that stops reading (a paused stream, a process stopped in a debugger, an attacker) otherwise
 * holds its connection, the reply's buffered bytes and, for a stream, its admission slot for as
 * long as it likes: two such readers made every other request on a concurrency-2 model a 529
 * (docs/reliability.md, "Slow clients").
 *
 * Progress is a 'drain': what was buffered for the client reached the kernel. A reply is written
 * in pieces of at most PIECE_BYTES (a write callback alone would not do: node:http corks a
 * turn's writes into one `writev`, whose callback comes only when all of it is out), so a slow
 * client that keeps reading drains a piece well within the limit. The deadline runs only while
 * the reply waits on its client (a write that returned false, until 'drain'; an end whose bytes
 * are not all out, until 'finish'): a reply its client keeps up with costs nothing.
 *
 * Cutting off destroys the response: its connection closes, and the response's 'close' before it
 * finished aborts the request's generation (routes/messages/route.ts), which gives its
 * admission slot back.
 */
import type { ServerResponse } from 'node:http';

/** The largest write of a reply: a socket buffer's worth, so that each one drains on its own. */
export const PIECE_BYTES = 64 * 1024;

export class WriteDeadline {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly response: ServerResponse,
    /** The reply's request, named to `onCut`: its headers went out by writeHead, so the response cannot say it. */
    private readonly requestId: string,
    private readonly limitMs: number,
    /** Told when a reply is cut off, for the log: one function serves every reply. */
    private readonly onCut?: (requestId: string) => void,
  ) {}

  /** Waits for the client to take what is buffered ('drain'), or for the response to close. */
  async drained(): Promise<void> {
    this.watch();
    await drainOrClose(this.response);
    this.settle();
  }

  /**
   * After `response.end()`: if bytes are still waiting for the client, the connection stays
   * open until they are out, so the deadline covers them too, until 'finish' or 'close'.
   */
  watchUntilFinished(): void {
    if (this.response.writableFinished || this.response.destroyed || this.response.writableLength === 0) return;
    this.watch();
    const settle = (): void => this.settle();
    this.response.once('finish', settle);
    this.response.once('close', settle);
  }

  private watch(): void {
    if (this.timer === undefined && !this.response.destroyed)
      this.timer = setTimeout(this.cutOff, this.limitMs).unref();
  }

  private settle(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly cutOff = (): void => {
    this.timer = undefined;
    if (this.response.destroyed || this.response.writableFinished) return;
    this.onCut?.(this.requestId);
    this.response.destroy();
  };
}

/**
 * Resolves on 'drain', or on 'close' since a peer that goes away never drains. Both listeners
 * go when either fires: a stream waits here on every backpressured write, and listeners left
 * from each wait would pile up on the response for the whole stream.
 */
export function drainOrClose(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const settle = (): void => {
      response.off('drain', settle);
      response.off('close', settle);
      resolve();
    };
    response.on('drain', settle);
    response.on('close', settle);
  });
}
