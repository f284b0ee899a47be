/**
 * Writes wire events as Server-Sent Events (`event:` and `data:` lines), honours backpressure,
 * and sends `ping` after message_start and whenever the stream has been quiet for a while. A
 * client that stops reading is cut off by the write deadline (http/write-deadline.ts).
 */
import type { ServerResponse } from 'node:http';
import type { StreamEvent } from '@model-messages/protocol';
import type { ConnectionClosing } from './connection-closing.js';
import { drainOrClose, PIECE_BYTES, type WriteDeadline } from './write-deadline.js';

const PING = 'event: ping\ndata: {"type": "ping"}\n\n';

export class SseWriter {
  private pingTimer: NodeJS.Timeout | undefined;
  private lastWrite = Date.now();
  /** Set while a write waits for 'drain': the socket is behind, a ping would only add to it. */
  private waitingForDrain = false;
  /** Set while what was written waits in the corked socket for the next write (`holdMs`). */
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly response: ServerResponse,
    private readonly pingIntervalMs: number,
    private readonly closing?: ConnectionClosing,
    private readonly deadline?: WriteDeadline,
  ) {}

  /**
   * `headers` must include request-id: the stream's headers are all written here, these and then
   * the ones below, which `headers` must not name. The
   * `connection` header is ours, `close` once the app is closing: left to Node, a stream's reply
   * also carries `Keep-Alive: timeout=72` (app.ts's keep-alive timeout), and app.close() after
   * streams whose clients had given up waited about 70 s (test/admission.test.ts's close: under
   * 1 s with the header, 70 s without).
   *
   * `trailerNames`: the trailers `end` will send, declared here as HTTP asks (a fallback list's
   * backend is chosen after the headers went out, routes/messages/route.ts).
   */
  open(headers: Record<string, string>, trailerNames: readonly string[] = []): void {
    // As a flat list of names and values, which node:http writes in order as it does an object's
    // keys: an object spread from `headers` with four more fields after it cost 2 to 3 us a
    // stream on Node 20 (each field added to a spread copy makes a new hidden class), 9 us in
    // the gateway bench's streamed profile (issue 36); the list, about 0.1 us.
    const fields: string[] = [];
    for (const name in headers) fields.push(name, headers[name]!);
    if (trailerNames.length > 0) fields.push('trailer', trailerNames.join(', '));
    fields.push(
      'content-type',
      'text/event-stream; charset=utf-8',
      'cache-control',
      'no-cache',
      // A client that asked for `connection: close` (or HTTP/1.0 without keep-alive) gets it: an
      // explicit keep-alive here would override Node's own choice and hold its socket open.
      'connection',
      this.closing?.started || !this.response.shouldKeepAlive ? 'close' : 'keep-alive',
      'x-accel-buffering',
      'no',
    );
    this.response.writeHead(200, fields);
    this.pingTimer = setInterval(() => this.pingIfQuiet(), Math.max(50, this.pingIntervalMs / 2));
    this.pingTimer.unref();
  }

  /**
   * Writes a batch of events in one socket write; a batch larger than a socket buffer (one very
   * long token) in pieces, so that the write deadline sees each one drain.
   *
   * With `holdMs`, the batch waits in the corked socket for up to that long, and goes out in one
   * write with the next batch if that comes sooner (or with the end). The stream's opening is
   * written so: an engine that answers within the hold costs one socket write fewer, and each
   * write wakes the client (on this project's 2-core VM about 50 µs of the writer's time). The
   * opening is late by at most the hold, which is short against what it is for (a queue or a
   * prefill that takes seconds), and the first output is not late at all.
   */
  async write(events: readonly StreamEvent[], holdMs = 0): Promise<void> {
    if (this.response.destroyed || events.length === 0) return;
    if (holdMs > 0 && this.holdTimer === undefined) {
      this.response.cork();
      this.holdTimer = setTimeout(this.release, holdMs);
      this.holdTimer.unref();
    }
    this.lastWrite = Date.now();
    let frames = '';
    for (const event of events) {
      frames += `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
      if (event.type === 'message_start') frames += PING;
    }
    // A character is at most 3 bytes in UTF-8: a batch this short is one piece.
    if (frames.length * 3 <= PIECE_BYTES) {
      const sent = this.send(frames);
      if (holdMs === 0) this.release();
      return sent;
    }
    this.release();
    const bytes = Buffer.from(frames);
    for (let offset = 0; offset < bytes.length && !this.response.destroyed; offset += PIECE_BYTES)
      await this.send(bytes.subarray(offset, offset + PIECE_BYTES));
  }

  /** Ends the stream, with `trailers` after its last chunk (chunked replies only: HTTP/1.0 has none). */
  end(trailers?: Record<string, string>): void {
    clearInterval(this.pingTimer);
    if (this.response.destroyed) return this.release();
    if (trailers !== undefined && this.response.chunkedEncoding) this.response.addTrailers(trailers);
    const socket = this.response.socket;
    // Closing started after the headers promised keep-alive: end the connection once the last
    // byte is out, or the server would wait on it (http/connection-closing.ts). Destroyed after
    // our end is sent, since the server keeps half-open sockets for a client that never ends its own.
    if (this.closing?.started && socket) this.response.once('finish', () => socket.end(() => socket.destroy()));
    this.response.end();
    this.release();
    this.deadline?.watchUntilFinished();
  }

  /** One write; while its client is behind, no ping is added and the write deadline runs. */
  private async send(chunk: string | Buffer): Promise<void> {
    if (this.response.write(chunk)) return;
    this.waitingForDrain = true;
    await (this.deadline ? this.deadline.drained() : drainOrClose(this.response));
    this.waitingForDrain = false;
  }

  /**
   * Lets what was held go out (nothing, unless a hold is on) at the next tick, as node:http does
   * with each write: the writes and the end of this tick then share the one socket write.
   */
  private readonly release = (): void => {
    if (this.holdTimer === undefined) return;
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    process.nextTick(() => this.response.uncork());
  };

  private pingIfQuiet(): void {
    if (Date.now() - this.lastWrite < this.pingIntervalMs || this.response.destroyed || this.waitingForDrain) return;
    this.lastWrite = Date.now();
    this.response.write(PING);
  }
}
