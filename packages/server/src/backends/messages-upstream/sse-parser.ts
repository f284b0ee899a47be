/**
 * Server-Sent Events from a byte stream: feed chunks as they arrive, get back the events that
 * are complete. Follows the WHATWG rules that matter here: `\n`, `\r\n` or `\r` line ends,
 * several `data:` lines joined by `\n`, one optional space after the colon, comment lines
 * (`:`) ignored, an event ended by a blank line. A UTF-8 character split across chunks is kept
 * whole by the streaming decoder.
 */

export interface ServerSentEvent {
  event: string;
  data: string;
}

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private event = '';
  private data: string[] = [];
  /** A `\r` ended the last chunk: a `\n` starting the next one belongs to the same line end. */
  private pendingCr = false;

  /** The events completed by this chunk, in order. */
  push(chunk: Uint8Array): ServerSentEvent[] {
    let text = this.decoder.decode(chunk, { stream: true });
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const events: ServerSentEvent[] = [];
    let start = 0;
    for (;;) {
      const end = nextLineEnd(this.buffer, start);
      if (end === -1) break;
      this.line(this.buffer.slice(start, end), events);
      if (this.buffer[end] === '\r') {
        if (end + 1 === this.buffer.length) this.pendingCr = true;
        start = this.buffer[end + 1] === '\n' ? end + 2 : end + 1;
      } else {
        start = end + 1;
      }
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /** True when the stream stopped in the middle of an event. */
  get hasPartialEvent(): boolean {
    return this.buffer !== '' || this.data.length > 0 || this.event !== '';
  }

  private line(line: string, events: ServerSentEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push({ event: this.event || 'message', data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    // `id` and `retry` mean nothing for one POST's reply.
  }
}

function nextLineEnd(text: string, from: number): number {
  for (let index = from; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 10 || code === 13) return index;
  }
  return -1;
}
