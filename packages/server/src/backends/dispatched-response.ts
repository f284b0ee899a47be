/**
 * One HTTP response of a remote backend (an engine, a Messages upstream) read through undici's
 * dispatch handler: its status and headers, then its body's text as it arrives, without the
 * Readable stream and async iterator that undici's `request` puts around a body. Measured
 * against the bench's fake engine, 8 rounds of 3,000 streamed chat completions each: 84 µs of
 * client CPU per request against 137 µs for `request` (medians; the request's own socket write
 * is in both).
 *
 * The reader takes pieces with `next()`; a server that sends faster than it is read is paused
 * (HIGH_WATER pieces held) and resumed once the reader catches up. `abort` ends the request, and
 * with it the connection: before the response, the request fails with that reason; after it, the
 * next `next()` throws it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { TextDecoder } from 'node:util';
import type { Dispatcher } from 'undici';

/** Pieces held before the server is paused; it is resumed below half of it. */
const HIGH_WATER = 16;

/**
 * What may follow the end of an answer (`[DONE]`, message_stop) before the server closes: more
 * than this, or a longer wait, and the connection is dropped instead of kept. Nothing waits on it.
 */
const DISCARD_LIMIT_MS = 1_000;
const DISCARD_LIMIT_BYTES = 64 * 1024;

export class DispatchedResponse implements Dispatcher.DispatchHandler {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  /** Set by `abort`: the request was ended here, for `reason`. */
  aborted = false;
  reason: unknown;
  /** Settles when the status and headers are in; rejects with the request's failure before them. */
  readonly started: Promise<void>;
  private resolveStarted!: () => void;
  private rejectStarted!: (error: Error) => void;
  private controller: Dispatcher.DispatchController | undefined;
  private readonly pieces: string[] = [];
  /**
   * Made only for a piece that ends inside a character (or a body that starts with a byte order
   * mark), and from then on decodes every piece, since it may hold a character's first bytes.
   */
  private decoder: TextDecoder | undefined;
  /** No piece has been decoded yet: a byte order mark here is the body's, and dropped. */
  private atStart = true;
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  /** After `discardRest`: the bytes dropped so far, and the limit on the wait. */
  private discarded: number | undefined;
  private discardTimer: NodeJS.Timeout | undefined;

  constructor() {
    this.started = new Promise<void>((resolve, reject) => {
      this.resolveStarted = resolve;
      this.rejectStarted = reject;
    });
    // A failure before the response is the caller's through `started`; unread, it is no crash.
    this.started.catch(() => {});
  }

  /**
   * Sends the request through `dispatcher` with this as its handler; settles when the status and
   * headers are in (`started`). Create the response first, so that timers and the caller's
   * cancellation can abort it from the start.
   */
  send(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): Promise<void> {
    dispatcher.dispatch(options, this);
    return this.started;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.aborted) controller.abort(asError(this.reason));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    this.headers = headers;
    this.resolveStarted();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.discarded !== undefined) {
      this.discarded += chunk.length;
      if (this.discarded > DISCARD_LIMIT_BYTES) controller.abort(new Error('too much after the end of the answer'));
      return;
    }
    this.pieces.push(this.decode(chunk));
    if (this.pieces.length >= HIGH_WATER) controller.pause();
    this.signal();
  }

  onResponseEnd(): void {
    const rest = this.decoder?.decode() ?? '';
    if (rest !== '' && this.discarded === undefined) this.pieces.push(rest);
    this.finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.failure = error;
    this.rejectStarted(error);
    this.finish();
  }

  /** A response header's value; the first, where the server sent it more than once. */
  header(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value[0] : value;
  }

  /** The body's next piece of text, or undefined at its end; throws what ended the request. */
  async next(): Promise<string | undefined> {
    while (this.pieces.length === 0) {
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    const piece = this.pieces.shift()!;
    if (this.controller?.paused && this.pieces.length < HIGH_WATER / 2) this.controller.resume();
    return piece;
  }

  /** The body's text, up to about `limit` characters: past it the request is ended, as a reader that stops does. */
  async text(limit: number): Promise<string> {
    let text = '';
    for (let piece = await this.next(); piece !== undefined; piece = await this.next()) {
      text += piece;
      if (text.length >= limit) {
        this.abort(new Error('read enough of the body'));
        break;
      }
    }
    return text;
  }

  /** Ends the request for `reason` (kept in `reason`); after the response has ended, nothing happens. */
  abort(reason: unknown): void {
    if (this.aborted || this.ended) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(asError(reason));
  }

  /**
   * The reader is done with the response: one not read to its end is ended (for an engine or an
   * upstream, closing is the cancel); one whose rest is being discarded is left to end by itself.
   */
  leave(): void {
    if (this.discarded === undefined) this.abort(new Error('the reader left the response'));
  }

  /**
   * The answer is complete: what the server still sends (servers send nothing more and close at
   * once) is dropped as it comes, so that the response ends normally and its connection goes back
   * to the pool, within the limits above.
   */
  discardRest(): void {
    this.discarded = 0;
    this.pieces.length = 0;
    if (this.ended) return;
    this.controller?.resume();
    this.discardTimer = setTimeout(() => this.abort(new Error('no end after the answer')), DISCARD_LIMIT_MS);
  }

  /**
   * A piece's text. A piece that ends on an ASCII byte (an SSE line end, a JSON body's `}`) ends
   * on a whole character, so with nothing held from the piece before it decodes on its own, as
   * `toString` does, the same text a streaming TextDecoder gives: on the gateway bench a
   * TextDecoder per response (its converter made, then each piece through it) was 1.9 % of mms's
   * busy time (issue 36), about 12 us a request.
   */
  private decode(chunk: Buffer): string {
    const atStart = this.atStart;
    if (chunk.length > 0) this.atStart = false;
    if (this.decoder === undefined) {
      const last = chunk.length === 0 ? 0 : chunk[chunk.length - 1]!;
      const bom = atStart && chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf;
      if (last < 0x80 && !bom) return chunk.toString('utf8');
      // From the body's start, a decoder drops its byte order mark as the whole body's did; after
      // it, those bytes are text (U+FEFF), as they were to the decoder that read the body whole.
      this.decoder = new TextDecoder('utf-8', { ignoreBOM: !atStart });
    }
    return this.decoder.decode(chunk, { stream: true });
  }

  private finish(): void {
    this.ended = true;
    clearTimeout(this.discardTimer);
    this.signal();
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
