/**
 * Writes wire events as Server-Sent Events (`event:` and `data:` lines), honours backpressure,
 * and sends `ping` after message_start and whenever the stream has been quiet for a while.
 */
import type { ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { StreamEvent } from '@mms/protocol';

export class SseWriter {
  private pingTimer: NodeJS.Timeout | undefined;
  private lastWrite = Date.now();

  constructor(
    private readonly response: ServerResponse,
    private readonly pingIntervalMs: number,
  ) {}

  /** `headers` must include request-id: a hijacked reply skips the framework's headers. */
  open(headers: Record<string, string>): void {
    this.response.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.pingTimer = setInterval(() => this.pingIfQuiet(), Math.max(50, this.pingIntervalMs / 2));
    this.pingTimer.unref();
  }

  async write(event: StreamEvent): Promise<void> {
    if (this.response.destroyed) return;
    this.lastWrite = Date.now();
    const flushed = this.response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    if (event.type === 'message_start') this.response.write('event: ping\ndata: {"type": "ping"}\n\n');
    // A peer that goes away never drains: 'close' ends the wait too.
    if (!flushed) await Promise.race([once(this.response, 'drain'), once(this.response, 'close')]);
  }

  end(): void {
    clearInterval(this.pingTimer);
    if (!this.response.destroyed) this.response.end();
  }

  private pingIfQuiet(): void {
    if (Date.now() - this.lastWrite < this.pingIntervalMs || this.response.destroyed) return;
    this.lastWrite = Date.now();
    this.response.write('event: ping\ndata: {"type": "ping"}\n\n');
  }
}
