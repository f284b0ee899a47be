/**
 * Writes wire events as Server-Sent Events (`event:` and `data:` lines), honours backpressure,
 * and sends `ping` after message_start and whenever the stream has been quiet for a while.
 */
import type { ServerResponse } from 'node:http';
import type { StreamEvent } from '@mms/protocol';
import type { ConnectionClosing } from './connection-closing.js';

const PING = 'event: ping\ndata: {"type": "ping"}\n\n';

export class SseWriter {
  private pingTimer: NodeJS.Timeout | undefined;
  private lastWrite = Date.now();
  /** Set while a write waits for 'drain': the socket is behind, a ping would only add to it. */
  private waitingForDrain = false;

  constructor(
    private readonly response: ServerResponse,
    private readonly pingIntervalMs: number,
    private readonly closing?: ConnectionClosing,
  ) {}

  /**
   * `headers` must include request-id: the stream's headers are all written here. The
   * `connection` header is ours, `close` once the app is closing: left to Node, a stream's reply
   * also carries `Keep-Alive: timeout=72` (app.ts's keep-alive timeout), and app.close() after
   * streams whose clients had given up waited about 70 s (test/admission.test.ts's close: under
   * 1 s with the header, 70 s without).
   */
  open(headers: Record<string, string>): void {
    this.response.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: this.closing?.started ? 'close' : 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.pingTimer = setInterval(() => this.pingIfQuiet(), Math.max(50, this.pingIntervalMs / 2));
    this.pingTimer.unref();
  }

  /** Writes a batch of events in one socket write. */
  async write(events: readonly StreamEvent[]): Promise<void> {
    if (this.response.destroyed || events.length === 0) return;
    this.lastWrite = Date.now();
    let frames = '';
    for (const event of events) {
      frames += `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
      if (event.type === 'message_start') frames += PING;
    }
    if (!this.response.write(frames)) await this.drained();
  }

  end(): void {
    clearInterval(this.pingTimer);
    if (this.response.destroyed) return;
    const socket = this.response.socket;
    // Closing started after the headers promised keep-alive: end the connection once the last
    // byte is out, or the server would wait on it (http/connection-closing.ts). Destroyed after
    // our end is sent, since the server keeps half-open sockets for a client that never ends its own.
    if (this.closing?.started && socket) this.response.once('finish', () => socket.end(() => socket.destroy()));
    this.response.end();
  }

  /**
   * Resolves on 'drain', or on 'close' since a peer that goes away never drains. Both listeners
   * go when either fires: a stream waits here on every backpressured write, and listeners left
   * from each wait would pile up on the response for the whole stream.
   */
  private drained(): Promise<void> {
    this.waitingForDrain = true;
    return new Promise((resolve) => {
      const settle = (): void => {
        this.response.off('drain', settle);
        this.response.off('close', settle);
        this.waitingForDrain = false;
        resolve();
      };
      this.response.on('drain', settle);
      this.response.on('close', settle);
    });
  }

  private pingIfQuiet(): void {
    if (Date.now() - this.lastWrite < this.pingIntervalMs || this.response.destroyed || this.waitingForDrain) return;
    this.lastWrite = Date.now();
    this.response.write(PING);
  }
}
