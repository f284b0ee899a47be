/**
 * Server-Sent Events as the engines send them (WHATWG HTML, "Parsing an event stream"): lines of
 * `field: value`, an event ends at a blank line, `data` lines join with "\n", `:` lines are
 * comments. llama.cpp server reports a failure mid-stream as an `error:` field, so that field
 * is kept apart. Pure: text in, events out, across arbitrary chunk boundaries.
 */
export interface SseEvent {
  /** `data`, or `error` for llama.cpp's error lines. */
  kind: 'data' | 'error';
  data: string;
}

export class SseParser {
  private partial = '';
  private data: string[] = [];
  private error: string[] = [];

  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    for (const raw of lines) this.line(raw.endsWith('\r') ? raw.slice(0, -1) : raw, events);
    return events;
  }

  /** The stream closed: an event not ended by a blank line still counts. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.partial !== '') this.line(this.partial, events);
    this.partial = '';
    this.dispatch(events);
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') {
      this.dispatch(events);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'error') this.error.push(value);
    // `event`, `id` and `retry` carry nothing the chat completions stream uses.
  }

  private dispatch(events: SseEvent[]): void {
    if (this.error.length > 0) events.push({ kind: 'error', data: this.error.join('\n') });
    if (this.data.length > 0) events.push({ kind: 'data', data: this.data.join('\n') });
    this.data = [];
    this.error = [];
  }
}
