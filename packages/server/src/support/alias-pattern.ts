/**
 * An alias with `*` in it: a pattern for model ids that clients choose themselves (Claude Code
 * sends `claude-opus-5-5`, `claude-haiku-4-5-20251001`, ...). `*` stands for any run of
 * characters, none included; every other character stands for itself, so a pattern carries no
 * regex syntax to inject. A pattern matches a name whole, not a part of it.
 *
 * The name comes from the request and may be megabytes long, so matching never backtracks: the
 * pieces between the stars are found left to right, each at its first place after the one
 * before. That first place is always the right one (it leaves the most room for the pieces
 * after it), so one pass decides, in time at most the name's length times the pattern's.
 */
export class AliasPattern {
  /** The literal pieces between the stars; the first is the name's start and the last its end. */
  private readonly pieces: readonly string[];
  private readonly literalLength: number;

  constructor(readonly text: string) {
    if (!isAliasPattern(text)) throw new Error(`"${text}" has no * and is an exact alias, not a pattern`);
    this.pieces = text.split('*');
    this.literalLength = this.pieces.reduce((length, piece) => length + piece.length, 0);
  }

  /**
   * The pattern with each run of stars written as one: `claude-**` matches what `claude-*`
   * matches, so the two are one pattern given twice.
   */
  get canonical(): string {
    return this.text.replace(/\*+/g, '*');
  }

  matches(name: string): boolean {
    if (name.length < this.literalLength) return false;
    const first = this.pieces[0]!;
    const last = this.pieces[this.pieces.length - 1]!;
    if (!name.startsWith(first) || !name.endsWith(last)) return false;
    // The middle pieces lie between the first and the last, which the length check keeps apart.
    const end = name.length - last.length;
    let position = first.length;
    for (let index = 1; index < this.pieces.length - 1; index++) {
      const piece = this.pieces[index]!;
      const found = name.indexOf(piece, position);
      if (found < 0 || found + piece.length > end) return false;
      position = found + piece.length;
    }
    return true;
  }
}

/** An alias is a pattern when it has a `*`; `"*"` alone catches every name. */
export function isAliasPattern(alias: string): boolean {
  return alias.includes('*');
}
