/**
 * A tool call's input streamed a member at a time (issue 35), as the public API streams a call's
 * input by default ("one complete key and value property at a time"): a member goes out once it
 * is whole and valid JSON, and the object's closing bracket only once the call is. Input that
 * turns out broken (cut short, run together with the next call's, missing a required field, not
 * JSON at all) can then still be finished by a repair: the members already sent stay as the
 * model wrote them, and the repair's value adds the others (`completion`).
 */
import { JsonScanner } from './json-scan.js';

export class InputMembers {
  /** The input's text as the engine wrote it. */
  text = '';
  private readonly scanner = new JsonScanner();
  /** Where the object's `{` stands in `text`, once read. */
  private start: number | undefined;
  /** Where the member being read starts: after the `{` or the last `,`. */
  private memberStart = 0;
  private scanned = 0;
  /** How much of `text` went out. */
  private released = 0;
  /** Where the object's closing bracket stands, once read. */
  closedAt: number | undefined;
  /** The text is no object's members as far as it came: nothing more goes out. */
  broken = false;
  /** The members that went out, parsed. */
  readonly sent: Record<string, unknown> = {};

  /** Appends the engine's next piece; answers the text that may go to the client now. */
  push(piece: string): string {
    this.text += piece;
    const from = this.released;
    for (; this.scanned < this.text.length && !this.broken && this.closedAt === undefined; this.scanned += 1) {
      const character = this.text[this.scanned]!;
      if (this.start === undefined) {
        if (/\s/.test(character)) continue;
        if (character !== '{') this.broken = true;
        else {
          this.start = this.scanned;
          this.released = this.scanned;
          this.memberStart = this.scanned + 1;
          this.scanner.read(character);
        }
        continue;
      }
      const mark = this.scanner.read(character);
      const ended = (mark === 'comma' && this.scanner.depth === 1) || (mark === 'close' && this.scanner.depth === 0);
      if (ended) this.memberEnded(mark === 'close');
    }
    return this.text.slice(Math.max(from, this.start ?? from), this.released);
  }

  /** Something of the input went out (its `{` and at least one member). */
  get opened(): boolean {
    return this.start !== undefined && this.released > this.start;
  }

  /** What closes the input as the engine wrote it: the text after the last member out, to the object's end. */
  closing(): string {
    if (this.closedAt === undefined) throw new Error('the input has not closed');
    return this.text.slice(this.start !== undefined && this.opened ? this.released : this.start, this.closedAt + 1);
  }

  /**
   * The input as the engine wrote it, once whole: its object, `{}` for no text at all (a call
   * without arguments), undefined when it is not (yet) an object.
   */
  object(): Record<string, unknown> | undefined {
    if (this.text.trim() === '') return {};
    if (this.broken || this.closedAt === undefined) return undefined;
    return JSON.parse(this.text.slice(this.start, this.closedAt + 1)) as Record<string, unknown>;
  }

  /** What has not gone out, as the engine wrote it: all a call cut by max_tokens has left to send. */
  rest(): string {
    return this.text.slice(this.opened ? this.released : (this.start ?? 0));
  }

  /** The text after the object's closing bracket: nothing, whitespace, or what the engine ran on with. */
  after(): string {
    return this.closedAt === undefined ? '' : this.text.slice(this.closedAt + 1);
  }

  /**
   * What finishes the input so that, with what went out, it reads as `value`'s members that
   * were not sent, after those that were: the whole of `value` when nothing went out.
   */
  completion(value: Record<string, unknown>): string {
    if (!this.opened) return JSON.stringify(value);
    return `${this.added(value)
      .map(([name, member]) => `, ${JSON.stringify(name)}: ${JSON.stringify(member)}`)
      .join('')}}`;
  }

  /** The input the client reads once `completion(value)` is sent. */
  completed(value: Record<string, unknown>): Record<string, unknown> {
    return this.opened ? { ...this.sent, ...Object.fromEntries(this.added(value)) } : value;
  }

  private added(value: Record<string, unknown>): Array<[string, unknown]> {
    return Object.entries(value).filter(([name]) => !Object.hasOwn(this.sent, name));
  }

  private memberEnded(closes: boolean): void {
    const member = this.text.slice(this.memberStart, this.scanned);
    if (!(closes && member.trim() === '')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(`{${member}}`);
      } catch {
        this.broken = true;
        return;
      }
      Object.assign(this.sent, parsed);
      this.released = this.scanned;
    }
    this.memberStart = this.scanned + 1;
    if (closes) this.closedAt = this.scanned;
  }
}
