/**
 * Integer bounds (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`) as GBNF: the
 * decimal texts of the integers in a range, as alternatives of digit classes (the construction
 * regular-expression range generators use: `[13, 219]` is `1[3-9] | [2-9][0-9] | 1[0-9][0-9] |
 * 2[01][0-9]`). Issue 35: Claude Code's tools bound their integers (`Read.offset` from 0,
 * `Read.limit` above 0), and a grammar that holds them keeps the call streamable.
 *
 * Integers carry at most INTEGER_DIGIT_LIMIT digits (gbnf-primitives.ts), so a bound past that
 * (Claude Code's ±2^53 - 1) is met by every integer the grammar writes: narrowing, never widening.
 * `-0` is left out, as `0` says the same.
 */
import { INTEGER_DIGIT_LIMIT } from './gbnf-primitives.js';
import { childPointer } from '../json-schema/json-pointer.js';
import type { SchemaObject } from '../json-schema/schema-object.js';
import { GrammarCompileError } from './schema-reading.js';

/** The keywords that bound a number. */
export const NUMBER_BOUND_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const;

/** The largest integer the grammar writes. */
const LARGEST = 10 ** INTEGER_DIGIT_LIMIT - 1;

export interface IntegerBounds {
  /** The least integer allowed. */
  lowest: number;
  /** The greatest integer allowed. */
  highest: number;
}

/** Whether `schema` bounds its numbers at all. */
export function hasNumberBounds(schema: SchemaObject): boolean {
  return NUMBER_BOUND_KEYWORDS.some((keyword) => Object.hasOwn(schema, keyword));
}

/** The integers `schema`'s bounds allow, clamped to what the grammar can write. */
export function integerBounds(schema: SchemaObject, path: string): IntegerBounds {
  let lowest = -LARGEST;
  let highest = LARGEST;
  for (const keyword of NUMBER_BOUND_KEYWORDS) {
    if (!Object.hasOwn(schema, keyword)) continue;
    const bound = schema[keyword];
    // Draft 4's boolean exclusiveMinimum, or anything else that is not a number.
    if (typeof bound !== 'number' || !Number.isFinite(bound))
      throw new GrammarCompileError(childPointer(path, keyword), `"${keyword}" must be a number`);
    if (keyword === 'minimum') lowest = Math.max(lowest, Math.ceil(bound));
    else if (keyword === 'exclusiveMinimum') lowest = Math.max(lowest, Math.floor(bound) + 1);
    else if (keyword === 'maximum') highest = Math.min(highest, Math.floor(bound));
    else highest = Math.min(highest, Math.ceil(bound) - 1);
  }
  if (lowest > highest) throw new GrammarCompileError(path, 'no integer lies within the bounds');
  return { lowest, highest };
}

/** A GBNF expression matching the decimal texts of the integers from `lowest` to `highest`. */
export function integerRangeGbnf({ lowest, highest }: IntegerBounds): string {
  const alternatives: string[] = [];
  if (lowest < 0) {
    const negative = naturalRange(Math.max(1, -highest), -lowest);
    alternatives.push(...negative.map((digits) => `"-" ${digits}`));
  }
  if (highest >= 0) alternatives.push(...naturalRange(Math.max(0, lowest), highest));
  return alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join(' | ')})`;
}

/** Sequences of digit classes for the naturals `from` to `to`, written without leading zeros. */
function naturalRange(from: number, to: number): string[] {
  const sequences: string[] = [];
  /** Lengths (in digits, past one) whose every text is in the range: written as one sequence. */
  let whole: { shortest: number; longest: number } | undefined;
  for (let digits = String(from).length; digits <= String(to).length; digits += 1) {
    const first = Math.max(from, digits === 1 ? 0 : 10 ** (digits - 1));
    const last = Math.min(to, 10 ** digits - 1);
    if (first > last) continue;
    if (digits > 1 && first === 10 ** (digits - 1) && last === 10 ** digits - 1) {
      whole = { shortest: whole?.shortest ?? digits, longest: digits };
      continue;
    }
    sequences.push(...sameLength(String(first), String(last)));
  }
  if (whole) sequences.push(`[1-9] [0-9]{${whole.shortest - 1},${whole.longest - 1}}`);
  return sequences;
}

/** Sequences for the texts from `low` to `high`, two digit strings of one length. */
function sameLength(low: string, high: string): string[] {
  if (low === high) return [`"${low}"`];
  if (low.length === 1) return [digitClass(low, high)];
  const [lowHead, highHead] = [low[0]!, high[0]!];
  const [lowTail, highTail] = [low.slice(1), high.slice(1)];
  if (lowHead === highHead) return sameLength(lowTail, highTail).map((rest) => `"${lowHead}" ${rest}`);
  const sequences: string[] = [];
  let middleFrom = Number(lowHead);
  let middleTo = Number(highHead);
  if (/[^0]/.test(lowTail)) {
    sequences.push(...sameLength(lowTail, '9'.repeat(lowTail.length)).map((rest) => `"${lowHead}" ${rest}`));
    middleFrom += 1;
  }
  const highSequences = /[^9]/.test(highTail)
    ? sameLength('0'.repeat(highTail.length), highTail).map((rest) => `"${highHead}" ${rest}`)
    : [];
  if (highSequences.length > 0) middleTo -= 1;
  if (middleFrom <= middleTo)
    sequences.push(`${digitClass(String(middleFrom), String(middleTo))} [0-9]{${lowTail.length}}`);
  return [...sequences, ...highSequences];
}

function digitClass(low: string, high: string): string {
  return low === high ? `"${low}"` : `[${low}-${high}]`;
}
