/**
 * The `{"name": ..., "input": ...}` envelope of one call among several tools
 * (output-instructions.ts, toolEnvelopeSchema), read as it is generated: once its name is known,
 * the input's JSON text as it comes. So an engine that writes the envelope streams the call's
 * input as every backend streams a call's (docs/compatibility.md), and keeps a call that
 * max_tokens cut as a partial tool_use block, as the public API does (issue 32).
 *
 * Only the order the schema declares, the name and then the input, is read as it comes: a
 * grammar built from the schema writes that order. An envelope in another order is read whole
 * at its end, by whoever parses it (the `name` here stays unknown).
 */

import { JsonScanner } from './json-scan.js';

/** The envelope up to its input's value: `{"name": "get_weather", "input":`, with any whitespace JSON allows. */
const ENVELOPE_HEAD = /^\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"input"\s*:/;

export class ToolEnvelopeReader {
  /** The called tool's name, once the envelope's head is whole. */
  name: string | undefined;
  /** The envelope's text as generated so far. */
  text = '';
  /** Where the input's value starts in `text` (its first character that is not whitespace). */
  private inputStart: number | undefined;
  /** Where the input's value ends in `text`, once it has. */
  private inputEnd: number | undefined;
  /** How far the input's value has been read. */
  private scanned = 0;
  private readonly scanner = new JsonScanner();

  /** Appends generated text; answers the text of the input it adds ('' before the name is known, and after the input). */
  push(piece: string): string {
    this.text += piece;
    if (this.inputStart === undefined) {
      const head = ENVELOPE_HEAD.exec(this.text);
      if (!head) return '';
      this.name = JSON.parse(head[1]!) as string;
      this.inputStart = head[0].length;
      this.scanned = head[0].length;
    }
    const from = this.scanned;
    this.scan();
    const start = Math.max(from, this.inputStart);
    return this.text.slice(start, this.inputEnd ?? this.scanned);
  }

  /** The input's text so far: whole once the envelope is, a prefix when it was cut. */
  get inputText(): string {
    if (this.inputStart === undefined) return '';
    return this.text.slice(this.inputStart, this.inputEnd ?? this.scanned);
  }

  /** Reads the input's value up to the end of the text, or to where the value ends. */
  private scan(): void {
    for (; this.scanned < this.text.length && this.inputEnd === undefined; this.scanned += 1) {
      const character = this.text[this.scanned]!;
      const started = this.scanned > this.inputStart!;
      if (!started && /\s/.test(character)) {
        // Whitespace before the value is the envelope's, not the input's.
        this.inputStart! += 1;
        continue;
      }
      const mark = this.scanner.read(character);
      const depth = this.scanner.depth;
      // A closing bracket outside the value (a scalar input) closes the envelope.
      if (mark === 'close' && depth < 0) this.inputEnd = this.scanned;
      else if ((mark === 'close' || mark === 'string') && depth === 0) this.inputEnd = this.scanned + 1;
      else if (depth === 0 && (mark === 'comma' || mark === 'space')) this.inputEnd = this.scanned;
    }
  }
}
