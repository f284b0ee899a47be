/**
 * Calls a model left in its reply's text (issue 35), read as the text streams. Text goes out as
 * it comes, but from where a call may start it is held back: a syntax's marker (`<tool_call>`,
 * `[TOOL_CALLS]`, ...) or the start of one at the end of what came, or a bracket at a line's
 * start for the syntaxes that write bare JSON; never inside a fenced code block. What is held
 * goes out as text as soon as no syntax can read a call there, or once a call is followed by
 * anything but more calls: a call stands at the end of a reply, and one in the middle of prose is
 * a quotation. At the reply's end, what is held and reads as calls, and nothing else, becomes
 * those calls.
 */
import type { OfferedTool } from '../../call/model-call.js';
import { skipSpace, type ReadContext, type SyntaxReading, type TextCall, type TextCallSyntax } from './text-call.js';

/**
 * Held text is read again as it grows, from its start: a call's syntax is only known whole.
 * Past this many characters it is read again once it has grown by half, so a long call costs
 * linear time, not quadratic.
 */
const READ_EVERY_PIECE_BELOW = 512;

export class LeakedCallReader {
  private held = '';
  /** Where the text released so far leaves off. */
  private readonly released = new TextPosition();
  private readonly markers: readonly string[];
  private readonly lineStarts: ReadonlySet<string>;
  /** The held text's length when it is next read (throttling long ones). */
  private nextRead = 0;

  constructor(
    private readonly syntaxes: readonly TextCallSyntax[],
    private readonly tools: readonly OfferedTool[],
  ) {
    this.markers = syntaxes.flatMap((syntax) => syntax.markers);
    this.lineStarts = new Set(syntaxes.flatMap((syntax) => syntax.lineStarts));
  }

  /** Appends the reply's next text; answers the text that may go out now. */
  push(text: string): string {
    this.held += text;
    if (this.held.length >= READ_EVERY_PIECE_BELOW && this.held.length < this.nextRead && this.heldAtCandidate())
      return '';
    return this.settle(false).text;
  }

  /** The reply ended: the text still held, or the calls it holds. */
  end(): { text: string; calls: TextCall[] } {
    return this.settle(true);
  }

  private settle(final: boolean): { text: string; calls: TextCall[] } {
    let text = '';
    for (;;) {
      text += this.release(this.firstCandidate());
      if (this.held === '') return { text, calls: [] };
      const reading = this.readCalls(final);
      if (reading.kind === 'partial') {
        this.nextRead = Math.floor(this.held.length * 1.5);
        return { text, calls: [] };
      }
      if (reading.kind === 'calls') {
        this.held = '';
        return { text, calls: reading.calls };
      }
      // No call here: what was read goes out as text, and the search goes on after it.
      text += this.release(reading.release);
    }
  }

  /** The calls the held text reads as, one after another from its start. */
  private readCalls(
    final: boolean,
  ): { kind: 'calls'; calls: TextCall[] } | { kind: 'partial' } | { kind: 'none'; release: number } {
    const calls: TextCall[] = [];
    let at = 0;
    for (;;) {
      const reading = this.readAt(at, final);
      if (reading.kind === 'partial') return reading;
      // Not a call, or text after calls: a quotation. The first character goes at least.
      if (reading.kind === 'none') return { kind: 'none', release: Math.max(at, 1) };
      calls.push(...reading.calls);
      at = skipSpace(this.held, at + reading.end);
      if (at >= this.held.length) return final ? { kind: 'calls', calls } : { kind: 'partial' };
    }
  }

  /** A call of some syntax at `at` of the held text. */
  private readAt(at: number, final: boolean): SyntaxReading {
    const text = this.held.slice(at);
    // The start of a marker, the rest still to come.
    if (!final && this.markers.some((marker) => marker.length > text.length && marker.startsWith(text)))
      return { kind: 'partial' };
    const lineStart = this.lineStartAt(at);
    const candidates = this.syntaxes.filter(
      (syntax) =>
        syntax.markers.some((marker) => text.startsWith(marker)) ||
        (lineStart && syntax.lineStarts.includes(text[0] ?? '')),
    );
    if (candidates.length === 0) return { kind: 'none' };
    const context = this.context(final);
    const readings = candidates.map((syntax) => syntax.read(text, context));
    return (
      readings.find((reading) => reading.kind === 'calls') ??
      readings.find((reading) => reading.kind === 'partial') ?? { kind: 'none' }
    );
  }

  private context(final: boolean): ReadContext {
    return {
      final,
      offered: (name) => this.tools.find((tool) => tool.name === name),
      namePrefix: (prefix) => this.tools.some((tool) => tool.name.startsWith(prefix)),
    };
  }

  /** Where in the held text a call may first start; its length when nowhere. */
  private firstCandidate(): number {
    const position = this.released.copy();
    for (let at = 0; at < this.held.length; at += 1) {
      if (!position.fenced) {
        const rest = this.held.slice(at, at + 64);
        const marked = this.markers.some(
          (marker) => rest.startsWith(marker) || (at + marker.length > this.held.length && marker.startsWith(rest)),
        );
        if (marked || (position.lineStart && this.lineStarts.has(this.held[at]!))) return at;
      }
      at = position.advance(this.held, at);
    }
    return this.held.length;
  }

  /** Whether the held text still starts where a call may: between two reads of a long one. */
  private heldAtCandidate(): boolean {
    return this.firstCandidate() === 0;
  }

  private lineStartAt(at: number): boolean {
    const position = this.released.copy();
    for (let index = 0; index < at; index += 1) index = position.advance(this.held, index);
    return position.lineStart;
  }

  /** Releases the first `count` characters of the held text. */
  private release(count: number): string {
    const text = this.held.slice(0, count);
    for (let index = 0; index < text.length; index += 1) index = this.released.advance(text, index);
    this.held = this.held.slice(count);
    this.nextRead = 0;
    return text;
  }
}

/** Where a text leaves off: inside a fenced code block or not, at a line's start (only whitespace since it) or not. */
class TextPosition {
  fenced = false;
  lineStart = true;

  copy(): TextPosition {
    const copy = new TextPosition();
    copy.fenced = this.fenced;
    copy.lineStart = this.lineStart;
    return copy;
  }

  /** Reads the character at `at` of `text`; answers the index of the last character read (a fence is three). */
  advance(text: string, at: number): number {
    const character = text[at]!;
    if (this.lineStart && text.startsWith('```', at)) {
      this.fenced = !this.fenced;
      this.lineStart = false;
      return at + 2;
    }
    if (character === '\n') this.lineStart = true;
    else if (character !== ' ' && character !== '\t') this.lineStart = false;
    return at;
  }
}
