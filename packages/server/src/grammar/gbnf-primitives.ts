/**
 * The fixed GBNF rules every compiled schema draws on (whitespace, strings, numbers, any JSON
 * value) and the escaping that turns text into GBNF literals and character-class members.
 *
 * The caps below exist because a grammar is what stops a sampling model: with unbounded digits or
 * whitespace a model can emit `0000…` or blank lines forever and still be "valid". They make the
 * grammar reject a few schema-valid texts (a 16-digit integer, say), never accept an invalid one.
 */

/** Integers carry at most this many digits: 15 stays below 2^53, so every one survives JSON.parse exactly. */
export const INTEGER_DIGIT_LIMIT = 15;
/** Digits after a decimal point. */
export const FRACTION_DIGIT_LIMIT = 15;
/**
 * Exponent digits: 2. With at most 15 integer digits that keeps every number below 1e115, so
 * it parses to a finite double; 3 digits let `9e999` through, which JSON.parse turns into
 * Infinity and JSON.stringify then writes as null.
 */
export const EXPONENT_DIGIT_LIMIT = 2;
/** Whitespace characters allowed between two tokens: enough for `{"a": 1}` or one newline, not for a runaway. */
export const WHITESPACE_LIMIT = 2;

/** Characters a JSON string may hold unescaped: anything but `"`, `\` and the C0 controls. */
const PLAIN_CHARACTER_CLASS = '[^"\\\\\\x00-\\x1f]';

export type PrimitiveName =
  | 'ws'
  | 'string'
  | 'string-char'
  | 'key-char'
  | 'integer'
  | 'number'
  | 'boolean'
  | 'null'
  | 'value'
  | 'value-object'
  | 'value-member'
  | 'value-array';

interface PrimitiveRule {
  readonly body: string;
  /** Other primitives the body names, so only what is reachable gets written out. */
  readonly uses: readonly PrimitiveName[];
}

const INTEGER_PART = `"-"? ("0" | [1-9] [0-9]{0,${INTEGER_DIGIT_LIMIT - 1}})`;

/** Listed in the order they are written out; the rendered grammar is stable for a given schema. */
export const PRIMITIVE_RULES: Readonly<Record<PrimitiveName, PrimitiveRule>> = {
  ws: { body: `[ \\t\\n]{0,${WHITESPACE_LIMIT}}`, uses: [] },
  string: { body: '"\\"" string-char* "\\""', uses: ['string-char'] },
  'string-char': {
    body: `${PLAIN_CHARACTER_CLASS} | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})`,
    uses: [],
  },
  // Extra (additionalProperties) keys are written without escapes so that "is this a declared
  // key?" can be decided on the raw characters; see key-exclusion.ts.
  'key-char': { body: PLAIN_CHARACTER_CLASS, uses: [] },
  integer: { body: INTEGER_PART, uses: [] },
  number: {
    body: `${INTEGER_PART} ("." [0-9]{1,${FRACTION_DIGIT_LIMIT}})? ([eE] [-+]? [0-9]{1,${EXPONENT_DIGIT_LIMIT}})?`,
    uses: [],
  },
  boolean: { body: '"true" | "false"', uses: [] },
  null: { body: '"null"', uses: [] },
  // Any JSON value, recursively: nesting depth is left to the model, as every level costs tokens.
  value: {
    body: 'value-object | value-array | string | number | boolean | null',
    uses: ['value-object', 'value-array', 'string', 'number', 'boolean', 'null'],
  },
  'value-object': {
    body: '"{" ws (value-member (ws "," ws value-member)* ws)? "}"',
    uses: ['ws', 'value-member'],
  },
  'value-member': { body: 'string ws ":" ws value', uses: ['string', 'ws', 'value'] },
  'value-array': { body: '"[" ws (value (ws "," ws value)* ws)? "]"', uses: ['ws', 'value'] },
};

export const PRIMITIVE_NAMES = Object.keys(PRIMITIVE_RULES) as PrimitiveName[];

/** `\xNN`, `\uNNNN` or `\UNNNNNNNN`: the escapes llama.cpp's GBNF parser reads in literals and classes. */
function hexEscape(codePoint: number): string {
  if (codePoint <= 0xff) return `\\x${codePoint.toString(16).padStart(2, '0')}`;
  if (codePoint <= 0xffff) return `\\u${codePoint.toString(16).padStart(4, '0')}`;
  return `\\U${codePoint.toString(16).padStart(8, '0')}`;
}

/** A GBNF string literal matching exactly `text`. */
export function gbnfLiteral(text: string): string {
  let escaped = '';
  for (const character of text) {
    const codePoint = character.codePointAt(0) ?? 0;
    if (character === '"' || character === '\\') escaped += `\\${character}`;
    // Controls and lone surrogates are escaped: raw, they would break the line-based grammar
    // text or not survive UTF-8 encoding.
    else if (codePoint < 0x20 || codePoint === 0x7f || (codePoint >= 0xd800 && codePoint <= 0xdfff)) {
      escaped += hexEscape(codePoint);
    } else escaped += character;
  }
  return `"${escaped}"`;
}

/** One character as a member of a `[...]` class, escaped whenever it could read as syntax there. */
export function gbnfClassMember(character: string): string {
  const codePoint = character.codePointAt(0) ?? 0;
  return /^[A-Za-z0-9 ]$/.test(character) ? character : hexEscape(codePoint);
}

/** The unescaped-character class with some characters also excluded. */
export function plainCharacterClassExcluding(characters: readonly string[]): string {
  return `[^"\\\\\\x00-\\x1f${characters.map(gbnfClassMember).join('')}]`;
}

/** The GBNF literal for a JSON value, written compactly as JSON.stringify writes it. */
export function jsonLiteral(value: unknown): string {
  return gbnfLiteral(JSON.stringify(value));
}
