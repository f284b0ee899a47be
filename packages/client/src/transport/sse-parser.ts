/**
 * Server-Sent Events framing (WHATWG HTML, "Parsing an event stream"), incremental: feed text
 * as it arrives, get whole frames back. Comments and `id`/`retry` fields are ignored; a frame
 * cut off by the end of the stream is dropped, as the standard says.
 */

export interface SseFrame {
  event: string;
  data: string;
}

export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];

  push(chunk: string): SseFrame[] {
    this.buffer += chunk;
    const frames: SseFrame[] = [];
    let start = 0;
    for (let index = 0; index < this.buffer.length; index += 1) {
      const character = this.buffer[index];
      if (character !== '\n' && character !== '\r') continue;
      // A CR at the very end may be the first half of CRLF: wait for the next chunk.
      if (character === '\r' && index === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, index), frames);
      if (character === '\r' && this.buffer[index + 1] === '\n') index += 1;
      start = index + 1;
    }
    this.buffer = this.buffer.slice(start);
    return frames;
  }

  private line(line: string, frames: SseFrame[]): void {
    if (line === '') {
      if (this.data.length > 0) frames.push({ event: this.event || 'message', data: this.data.join('\n') });
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
  }
}
