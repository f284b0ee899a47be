/**
 * Server-Sent Events framing (WHATWG HTML, "Parsing an event stream"), incremental and pure:
 * feed text as it arrives, get whole frames back. One parser for every stream mms reads: the
 * client reading this service, the Messages upstream backend reading another one, and the
 * OpenAI-compatible backend reading an engine.
 *
 * Text, not bytes: a caller that gets bytes decodes them with one streaming TextDecoder
 * (`decode(chunk, { stream: true })`), which keeps a UTF-8 character split across chunks whole.
 *
 * What it follows: `\n`, `\r\n` and `\r` line ends (a CRLF split across chunks is one line end),
 * one optional space after the colon, several `data` lines joined by `\n`, `:` comment lines
 * ignored, a frame ended by a blank line, `event` defaulting to `message`. `id` and `retry` are
 * ignored: every stream here is the reply to one POST, never reconnected with Last-Event-ID.
 *
 * One field beyond the standard: llama.cpp server reports a failure mid-stream as an `error:`
 * field instead of a `data:` one, so `error` lines are kept apart from the data; a frame is
 * dispatched when it has data or error lines.
 *
 * At the end of the stream the standard drops a frame not ended by a blank line; engines close
 * right after their last line, so `end()` flushes it. Callers that must drop or refuse a cut-off
 * frame ask `hasPartialFrame` before (or instead of) calling `end()`.
 */

export interface SseFrame {
  /** The `event` field, `message` when the frame had none. */
  event: string;
  /** The `data` lines joined by `\n`; empty when the frame had only `error` lines. */
  data: string;
  /** llama.cpp's `error` lines joined by `\n`; absent when the frame had none. */
  error?: string;
}

export class SseParser {
  /** Text after the last line end: a line not yet complete. */
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private error: string[] = [];
  /** The last chunk ended with `\r`: a `\n` starting the next one ends the same line. */
  private pendingCr = false;

  /** The frames completed by this text, in order. */
  push(text: string): SseFrame[] {
    // Empty text (a decoder holding the first bytes of a character) must not forget a pending CR.
    if (text === '') return [];
    // The line before the CR was already taken when the CR arrived; only its LF half is left.
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    const buffer = this.buffer + text;
    const frames: SseFrame[] = [];
    // Line ends found with indexOf, not a loop over every character: a stream's text is mostly
    // JSON between line ends, and the engine client reads every byte of every reply through here
    // (issue 36: about a third of this parser's time on the gateway bench's stream). Each search
    // runs again only once its last find is behind `start`; one that found none stays at -1.
    let start = 0;
    let lf = buffer.indexOf('\n');
    let cr = buffer.indexOf('\r');
    while (lf !== -1 || cr !== -1) {
      const index = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
      this.line(buffer.slice(start, index), frames);
      start = index + 1;
      if (index === cr) {
        // A CR ending the text is taken now (a frame ended by it goes out without waiting for
        // the next chunk), and the LF that may start the next chunk is skipped then.
        if (start === buffer.length) this.pendingCr = true;
        else if (lf === start) start += 1;
      }
      if (lf !== -1 && lf < start) lf = buffer.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = buffer.indexOf('\r', start);
    }
    this.buffer = buffer.slice(start);
    return frames;
  }

  /**
   * The stream closed: a last line without its line end, and a frame without its blank line,
   * still count. Leaves the parser empty, as a fresh one.
   */
  end(): SseFrame[] {
    const frames: SseFrame[] = [];
    if (this.buffer !== '') this.line(this.buffer, frames);
    this.buffer = '';
    this.pendingCr = false;
    this.dispatch(frames);
    return frames;
  }

  /** True when the text so far stopped inside a frame: a line or fields not yet ended by a blank line. */
  get hasPartialFrame(): boolean {
    return this.buffer !== '' || this.event !== '' || this.data.length > 0 || this.error.length > 0;
  }

  private line(line: string, frames: SseFrame[]): void {
    if (line === '') {
      this.dispatch(frames);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    // A line without a colon is a field name with an empty value.
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'error') this.error.push(value);
  }

  private dispatch(frames: SseFrame[]): void {
    if (this.data.length > 0 || this.error.length > 0) {
      const frame: SseFrame = { event: this.event || 'message', data: this.data.join('\n') };
      if (this.error.length > 0) frame.error = this.error.join('\n');
      frames.push(frame);
    }
    this.event = '';
    this.data = [];
    this.error = [];
  }
}
