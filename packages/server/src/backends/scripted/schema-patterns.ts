/**
 * A small writer of strings that match the simple regular expressions tool schemas use
 * (anchors, literals, classes, groups, alternation, quantifiers). Callers check its output with
 * a real RegExp, so syntax it misreads costs only a fallback, never a wrong answer.
 */

/** JSON Schema patterns are ECMA-262 with Unicode semantics; a source only the legacy syntax accepts still counts. */
export function compilePattern(source: string): RegExp | undefined {
  for (const flags of ['u', '']) {
    try {
      return new RegExp(source, flags);
    } catch {
      // Try the next flag set; a source neither accepts is ignored.
    }
  }
  return undefined;
}

interface PatternCursor {
  readonly source: string;
  index: number;
  /** Repeat quantified atoms more than their minimum, which helps meet a minLength. */
  readonly generous: boolean;
}

interface ClassMember {
  readonly sample: string;
  contains(character: string): boolean;
}

/** Writes a string for the simple regular expressions tool schemas use; undefined where the syntax is beyond it. */
export function textMatchingPattern(source: string, generous: boolean): string | undefined {
  const cursor: PatternCursor = { source, index: 0, generous };
  try {
    const text = readAlternatives(cursor);
    return cursor.index === source.length ? text : undefined;
  } catch {
    return undefined;
  }
}

function peek(cursor: PatternCursor, offset = 0): string {
  return cursor.source.charAt(cursor.index + offset);
}

function readAlternatives(cursor: PatternCursor): string {
  const first = readSequence(cursor);
  while (peek(cursor) === '|') {
    cursor.index += 1;
    readSequence(cursor);
  }
  return first;
}

function readSequence(cursor: PatternCursor): string {
  let text = '';
  while (cursor.index < cursor.source.length && peek(cursor) !== '|' && peek(cursor) !== ')') {
    const atom = readAtom(cursor);
    text += atom.repeat(readRepeatCount(cursor));
  }
  return text;
}

function readAtom(cursor: PatternCursor): string {
  const character = String.fromCodePoint(cursor.source.codePointAt(cursor.index) ?? 0);
  cursor.index += character.length;
  if (character === '^' || character === '$') return '';
  if (character === '.') return 'a';
  if (character === '(') return readGroup(cursor);
  if (character === '[') return readClass(cursor);
  if (character === '\\') return readEscape(cursor).sample;
  return character;
}

function readGroup(cursor: PatternCursor): string {
  const lookaround = /^\?(?:[=!]|<[=!])/.exec(cursor.source.slice(cursor.index));
  const named = /^\?<[A-Za-z_$][\w$]*>/.exec(cursor.source.slice(cursor.index));
  const prefix = lookaround?.[0] ?? named?.[0] ?? (cursor.source.startsWith('?:', cursor.index) ? '?:' : '');
  cursor.index += prefix.length;
  const text = readAlternatives(cursor);
  if (peek(cursor) !== ')') throw new Error('unclosed group');
  cursor.index += 1;
  // A lookaround consumes nothing; the final RegExp check decides whether it held.
  return lookaround === null ? text : '';
}

function readClass(cursor: PatternCursor): string {
  const negated = peek(cursor) === '^';
  if (negated) cursor.index += 1;
  const members: ClassMember[] = [];
  while (peek(cursor) !== ']') {
    if (cursor.index >= cursor.source.length) throw new Error('unclosed class');
    const start = readClassMember(cursor);
    if (peek(cursor) === '-' && peek(cursor, 1) !== ']' && peek(cursor, 1) !== '') {
      cursor.index += 1;
      members.push(rangeMember(start.sample, readClassMember(cursor).sample));
    } else {
      members.push(start);
    }
  }
  cursor.index += 1;
  const sample = negated
    ? ['a', 'A', '0', '_', '-', ' ', '.'].find((character) => !members.some((member) => member.contains(character)))
    : members[0]?.sample;
  if (sample === undefined) throw new Error('empty class');
  return sample;
}

function readClassMember(cursor: PatternCursor): ClassMember {
  if (peek(cursor) !== '\\') return literalMember(cursor);
  cursor.index += 1;
  return readEscape(cursor);
}

function literalMember(cursor: PatternCursor): ClassMember {
  const character = String.fromCodePoint(cursor.source.codePointAt(cursor.index) ?? 0);
  cursor.index += character.length;
  return { sample: character, contains: (candidate) => candidate === character };
}

function rangeMember(first: string, last: string): ClassMember {
  const low = first.codePointAt(0) ?? 0;
  const high = last.codePointAt(0) ?? 0;
  return {
    sample: first,
    contains: (candidate) => (candidate.codePointAt(0) ?? -1) >= low && (candidate.codePointAt(0) ?? -1) <= high,
  };
}

const CLASS_ESCAPES = new Map<string, ClassMember>([
  ['d', { sample: '0', contains: (character) => /\d/.test(character) }],
  ['D', { sample: 'a', contains: (character) => /\D/.test(character) }],
  ['w', { sample: 'a', contains: (character) => /\w/.test(character) }],
  ['W', { sample: '-', contains: (character) => /\W/.test(character) }],
  ['s', { sample: ' ', contains: (character) => /\s/.test(character) }],
  ['S', { sample: 'a', contains: (character) => /\S/.test(character) }],
  ['b', { sample: '', contains: () => false }],
  ['B', { sample: '', contains: () => false }],
]);

const CONTROL_ESCAPES = new Map([
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
  ['f', '\f'],
  ['v', '\v'],
  ['0', '\0'],
]);

/** Reads what follows a backslash (already consumed). */
function readEscape(cursor: PatternCursor): ClassMember {
  const letter = peek(cursor);
  cursor.index += 1;
  const known = CLASS_ESCAPES.get(letter);
  if (known !== undefined) return known;
  const hex = /^(?:u\{([0-9a-fA-F]+)\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2}))/.exec(
    cursor.source.slice(cursor.index - 1),
  );
  const code = hex?.[1] ?? hex?.[2] ?? hex?.[3];
  if (hex !== null && code !== undefined) cursor.index += hex[0].length - 1;
  const character =
    code !== undefined ? String.fromCodePoint(parseInt(code, 16)) : (CONTROL_ESCAPES.get(letter) ?? letter);
  return { sample: character, contains: (candidate) => candidate === character };
}

function readRepeatCount(cursor: PatternCursor): number {
  const bounds = readQuantifier(cursor);
  if (bounds === undefined) return 1;
  // A lazy marker changes matching order, not which strings match.
  if (peek(cursor) === '?') cursor.index += 1;
  const [minimum, maximum] = bounds;
  const count = cursor.generous ? (Number.isFinite(maximum) ? maximum : minimum + 3) : minimum;
  return Math.min(count, 256);
}

function readQuantifier(cursor: PatternCursor): [number, number] | undefined {
  const braces = /^\{(\d+)(,(\d*))?\}/.exec(cursor.source.slice(cursor.index));
  if (braces !== null) {
    cursor.index += braces[0].length;
    const minimum = Number(braces[1]);
    if (braces[2] === undefined) return [minimum, minimum];
    return [minimum, braces[3] === '' ? Number.POSITIVE_INFINITY : Number(braces[3])];
  }
  const symbol = peek(cursor);
  if (symbol !== '?' && symbol !== '*' && symbol !== '+') return undefined;
  cursor.index += 1;
  return [symbol === '+' ? 1 : 0, symbol === '?' ? 1 : Number.POSITIVE_INFINITY];
}
