/**
 * A string's `pattern` as GBNF for the JSON text of the string's content: the regular
 * expressions tool schemas write (Claude Code's `Workflow.resumeFromRunId` is `^wf_[a-z0-9-]{6,}$`)
 * held by the grammar, so such a call stays exact and streams (issue 35). llama.cpp's own JSON
 * Schema converter compiles patterns the same way.
 *
 * Read: literals, escapes (`\d \w \s` and their negations, `\n \t \xHH \uHHHH`, escaped
 * punctuation), classes and negated classes with ranges, `.`, groups (`(...)`, `(?:...)`,
 * named), alternation, the quantifiers `* + ? {m} {m,} {m,n}` (lazy ones match the same texts),
 * and `^` / `$` at the ends of a top-level alternative; an unanchored side may have any text
 * there, as `pattern` searches. Anything else (back-references, look-arounds, word boundaries,
 * flags, Unicode properties) throws GrammarCompileError, and a lenient compile widens the string.
 *
 * The pattern matches the decoded string, the grammar its JSON text: a character JSON must
 * escape (`"`, `\`, the C0 controls) is written as its escape. Negated classes and `.` leave
 * those characters out: the grammar then refuses a few valid strings, never admits an invalid one.
 */
import { gbnfClassMember, gbnfLiteral } from './gbnf-primitives.js';
import { childPointer } from '../json-schema/json-pointer.js';
import { GrammarCompileError } from './schema-reading.js';

/** Largest count a `{m,n}` may ask for: llama.cpp expands a repetition into one rule per count. */
export const PATTERN_REPEAT_LIMIT = 100;

/** What JSON text writes as an escape, and so what a negated class or `.` leaves out. */
const JSON_ESCAPED = '"\\\\\\x00-\\x1f';

/** A class as code point ranges, or the negation of one. */
interface CharacterSet {
  ranges: Array<[number, number]>;
  negated: boolean;
}

const DIGITS: Array<[number, number]> = [[0x30, 0x39]];
const WORD: Array<[number, number]> = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: Array<[number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
];

/** GBNF for the JSON text of a string's content matching `pattern` (the quotes not included). */
export function patternGbnf(pattern: string, path: string, anyCharacter: string): string {
  const where = childPointer(path, 'pattern');
  return new PatternReader(pattern, where, anyCharacter).read();
}

class PatternReader {
  private at = 0;

  constructor(
    private readonly pattern: string,
    private readonly where: string,
    /** The rule of one character of a JSON string, escapes included: what an unanchored side repeats. */
    private readonly anyCharacter: string,
  ) {}

  read(): string {
    const alternatives: string[] = [];
    do {
      const anchoredStart = this.take('^');
      const body = this.sequence(true);
      const anchoredEnd = this.take('$');
      const parts = [anchoredStart ? '' : `${this.anyCharacter}*`, body, anchoredEnd ? '' : `${this.anyCharacter}*`];
      alternatives.push(parts.filter((part) => part !== '').join(' ') || '""');
    } while (this.take('|'));
    if (this.at < this.pattern.length) this.refuse(`"${this.pattern[this.at]!}" where it cannot stand`);
    return alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join(' | ')})`;
  }

  /** Atoms up to `|`, `)` or the end; `topLevel` stops before a `$` that ends the pattern's alternative. */
  private sequence(topLevel: boolean): string {
    const atoms: string[] = [];
    while (this.at < this.pattern.length) {
      const character = this.pattern[this.at]!;
      if (character === '|' || character === ')') break;
      if (character === '$' && topLevel && this.endsAlternative(this.at + 1)) break;
      if (character === '^' || character === '$') this.refuse(`an anchor "${character}" inside the pattern`);
      atoms.push(this.quantified(this.atom()));
    }
    return atoms.join(' ');
  }

  private endsAlternative(position: number): boolean {
    return position === this.pattern.length || this.pattern[position] === '|';
  }

  private alternation(): string {
    const alternatives: string[] = [];
    do alternatives.push(this.sequence(false));
    while (this.take('|'));
    const written = alternatives.filter((alternative) => alternative !== '');
    if (written.length === 0) return '""';
    const group = `(${written.join(' | ')})`;
    // An empty alternative makes the rest optional: GBNF has no empty alternative.
    return written.length < alternatives.length ? `${group}?` : group;
  }

  private atom(): string {
    const character = this.pattern[this.at]!;
    this.at += 1;
    switch (character) {
      case '(':
        return this.group();
      case '[':
        return this.classAtom();
      case '.':
        return `[^${JSON_ESCAPED}]`;
      case '\\':
        return this.escapeAtom();
      case '*':
      case '+':
      case '?':
        return this.refuse(`a quantifier "${character}" with nothing to repeat`);
      default: {
        const codePoint = this.pattern.codePointAt(this.at - 1)!;
        // The second half of a surrogate pair.
        if (codePoint > 0xffff) this.at += 1;
        return jsonTextOf(codePoint);
      }
    }
  }

  private group(): string {
    if (this.take('?')) {
      if (this.take(':')) {
        // A non-capturing group.
      } else if (this.take('P<') || this.take('<')) {
        const close = this.pattern.indexOf('>', this.at);
        if (close < 0) this.refuse('an unclosed group name');
        this.at = close + 1;
      } else this.refuse('a group with flags or a look-around');
    }
    const body = this.alternation();
    if (!this.take(')')) this.refuse('an unclosed group');
    return body;
  }

  private quantified(atom: string): string {
    const character = this.pattern[this.at];
    let quantifier: string | undefined;
    if (character === '*' || character === '+' || character === '?') {
      quantifier = character;
      this.at += 1;
    } else if (character === '{') {
      const repetition = /^\{(\d+)(,(\d*))?\}/.exec(this.pattern.slice(this.at));
      // RE2 reads a brace that starts no repetition as itself.
      if (!repetition) return atom;
      const least = Number(repetition[1]);
      const most = repetition[2] === undefined ? least : repetition[3] === '' ? undefined : Number(repetition[3]);
      if (least > PATTERN_REPEAT_LIMIT || (most ?? 0) > PATTERN_REPEAT_LIMIT)
        this.refuse(`a repetition above ${PATTERN_REPEAT_LIMIT}`);
      if (most !== undefined && most < least) this.refuse('a repetition whose maximum is below its minimum');
      quantifier = most === least ? `{${least}}` : `{${least},${most ?? ''}}`;
      this.at += repetition[0].length;
    }
    if (quantifier === undefined) return atom;
    // A lazy quantifier matches the same texts.
    this.take('?');
    const grouped = /^(\w[\w-]*|"[^"]*"|\[[^\]]*\])$/.test(atom) ? atom : `(${atom})`;
    return `${grouped}${quantifier}`;
  }

  private escapeAtom(): string {
    const set = this.escapedSet();
    return set === undefined ? this.escapedCharacter() : setGbnf(set);
  }

  /** `\d`, `\w`, `\s` and their negations; undefined for an escape of one character. */
  private escapedSet(): CharacterSet | undefined {
    const letter = this.pattern[this.at];
    const sets: Record<string, CharacterSet> = {
      d: { ranges: DIGITS, negated: false },
      D: { ranges: DIGITS, negated: true },
      w: { ranges: WORD, negated: false },
      W: { ranges: WORD, negated: true },
      s: { ranges: SPACE, negated: false },
      S: { ranges: SPACE, negated: true },
    };
    const set = letter === undefined ? undefined : sets[letter];
    if (set) this.at += 1;
    return set;
  }

  /** The character an escape stands for, as GBNF. */
  private escapedCharacter(): string {
    return jsonTextOf(this.escapedCodePoint());
  }

  private escapedCodePoint(): number {
    const letter = this.pattern[this.at];
    if (letter === undefined) this.refuse('a pattern that ends in "\\"');
    this.at += 1;
    const controls: Record<string, number> = { n: 0x0a, t: 0x09, r: 0x0d, f: 0x0c, v: 0x0b, '0': 0x00 };
    if (controls[letter!] !== undefined && !/[1-9]/.test(this.pattern[this.at] ?? '')) return controls[letter!]!;
    const hex = letter === 'x' ? /^[0-9a-fA-F]{2}/ : letter === 'u' ? /^[0-9a-fA-F]{4}/ : undefined;
    if (hex) {
      const digits = hex.exec(this.pattern.slice(this.at));
      if (!digits) this.refuse(`a malformed "\\${letter!}" escape`);
      this.at += digits![0].length;
      return parseInt(digits![0], 16);
    }
    if (/[A-Za-z0-9]/.test(letter!)) this.refuse(`the escape "\\${letter!}"`);
    return letter!.codePointAt(0)!;
  }

  private classAtom(): string {
    const set: CharacterSet = { ranges: [], negated: this.take('^') };
    let first = true;
    while (this.at < this.pattern.length && (first || this.pattern[this.at] !== ']')) {
      first = false;
      const low = this.classMember(set);
      if (low === undefined) continue;
      if (this.pattern[this.at] === '-' && this.pattern[this.at + 1] !== ']' && this.at + 1 < this.pattern.length) {
        this.at += 1;
        const high = this.classMember(set);
        if (high === undefined || high < low) this.refuse('a malformed class range');
        set.ranges.push([low, high!]);
      } else set.ranges.push([low, low]);
    }
    if (!this.take(']')) this.refuse('an unclosed class');
    return setGbnf(set);
  }

  /** One member's code point; a `\d`-like escape is added to `set` whole, and answers undefined. */
  private classMember(set: CharacterSet): number | undefined {
    const character = this.pattern[this.at]!;
    if (character === '[' && this.pattern[this.at + 1] === ':') this.refuse('a POSIX class');
    if (character !== '\\') {
      const codePoint = character.codePointAt(0)!;
      this.at += String.fromCodePoint(codePoint).length;
      return codePoint;
    }
    this.at += 1;
    const named = this.escapedSet();
    if (named) {
      if (named.negated) this.refuse('a negated escape inside a class');
      set.ranges.push(...named.ranges);
      return undefined;
    }
    if (this.pattern[this.at] === 'b') {
      // Inside a class `\b` is a backspace.
      this.at += 1;
      return 0x08;
    }
    return this.escapedCodePoint();
  }

  private take(text: string): boolean {
    if (!this.pattern.startsWith(text, this.at)) return false;
    this.at += text.length;
    return true;
  }

  private refuse(what: string): never {
    throw new GrammarCompileError(this.where, `unsupported pattern: ${what}`);
  }
}

/** The JSON text of one character inside a string, as a GBNF literal. */
function jsonTextOf(codePoint: number): string {
  const character = String.fromCodePoint(codePoint);
  const short: Record<string, string> = {
    '"': '\\"',
    '\\': '\\\\',
    '\n': '\\n',
    '\t': '\\t',
    '\r': '\\r',
    '\f': '\\f',
    '\b': '\\b',
  };
  if (short[character] !== undefined) return gbnfLiteral(short[character]);
  if (codePoint < 0x20) return gbnfLiteral(`\\u${codePoint.toString(16).padStart(4, '0')}`);
  return gbnfLiteral(character);
}

/**
 * A class as GBNF: its plain members as one GBNF class, and each member JSON writes as an escape
 * as its own literal. A negated class leaves the escaped characters out altogether.
 */
function setGbnf(set: CharacterSet): string {
  if (set.negated) {
    const members = set.ranges.map(([low, high]) => rangeMember(low, high)).join('');
    return `[^${members}${JSON_ESCAPED}]`;
  }
  const plain: string[] = [];
  const escaped: string[] = [];
  for (const [low, high] of set.ranges) {
    for (let codePoint = low; codePoint <= Math.min(high, 0x7f) && codePoint <= high; codePoint += 1) {
      if (codePoint < 0x20 || codePoint === 0x22 || codePoint === 0x5c) escaped.push(jsonTextOf(codePoint));
    }
    // The plain part of the range, split around the characters JSON escapes.
    for (const [from, to] of plainParts(low, high)) plain.push(rangeMember(from, to));
  }
  const alternatives = [...(plain.length > 0 ? [`[${plain.join('')}]`] : []), ...new Set(escaped)];
  if (alternatives.length === 0) return '""';
  return alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join(' | ')})`;
}

/** `[low, high]` less the control characters, `"` and `\`. */
function plainParts(low: number, high: number): Array<[number, number]> {
  const parts: Array<[number, number]> = [];
  let from = Math.max(low, 0x20);
  for (const excluded of [0x22, 0x5c]) {
    if (from > high) return parts;
    if (excluded >= from && excluded <= high) {
      if (excluded > from) parts.push([from, excluded - 1]);
      from = excluded + 1;
    }
  }
  if (from <= high) parts.push([from, high]);
  return parts;
}

function rangeMember(low: number, high: number): string {
  const first = gbnfClassMember(String.fromCodePoint(low));
  return low === high ? first : `${first}-${gbnfClassMember(String.fromCodePoint(high))}`;
}
