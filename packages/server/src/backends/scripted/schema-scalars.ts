/**
 * Strings and numbers for the scripted backend's instance builder. Values are chosen, never
 * drawn at random: the same schema and hints always give the same value.
 */
import {
  EXTRA_PATTERNS_KEYWORD,
  BuildFailure,
  nonNegativeInteger,
  stringList,
  type SchemaObject,
} from './schema-references.js';
import { compilePattern, textMatchingPattern } from './schema-patterns.js';

/** What a scalar builder knows about where its value goes. `variant` > 0 asks for a value distinct from variant 0. */
export interface ScalarHints {
  readonly path: string;
  readonly propertyName: string | undefined;
  readonly variant: number;
}

const twoDigits = (value: number): string => String(value).padStart(2, '0');
const numbered = (variant: number): string => (variant === 0 ? '' : String(variant + 1));

/** Looked up through a Map so that a format named "constructor" finds nothing. */
const FORMAT_EXAMPLES = new Map<string, (variant: number) => string>([
  ['date-time', (variant) => `2024-01-${twoDigits((variant % 28) + 1)}T12:00:00Z`],
  ['date', (variant) => `2024-01-${twoDigits((variant % 28) + 1)}`],
  ['time', (variant) => `12:00:${twoDigits(variant % 60)}Z`],
  ['email', (variant) => `user${numbered(variant)}@example.com`],
  ['idn-email', (variant) => `user${numbered(variant)}@example.com`],
  ['uri', (variant) => `https://example.com/${variant === 0 ? '' : `item-${variant + 1}`}`],
  ['url', (variant) => `https://example.com/${variant === 0 ? '' : `item-${variant + 1}`}`],
  ['iri', (variant) => `https://example.com/${variant === 0 ? '' : `item-${variant + 1}`}`],
  ['uri-reference', (variant) => `/example${numbered(variant)}`],
  ['iri-reference', (variant) => `/example${numbered(variant)}`],
  ['uuid', (variant) => `00000000-0000-4000-8000-${String(variant).padStart(12, '0')}`],
  ['ipv4', (variant) => `192.0.2.${(variant % 254) + 1}`],
  ['ipv6', (variant) => `2001:db8::${(variant + 1).toString(16)}`],
  ['hostname', (variant) => `host${numbered(variant)}.example.com`],
  ['idn-hostname', (variant) => `host${numbered(variant)}.example.com`],
  ['duration', (variant) => `P${variant + 1}D`],
  ['json-pointer', (variant) => `/example${numbered(variant)}`],
  ['regex', (variant) => `^example${numbered(variant)}$`],
]);

/** The longest string the scripted backend writes for a schema: a larger minLength is refused. */
const LONGEST_EXAMPLE_STRING = 1_000_000;

/** Short strings that often satisfy simple patterns such as `^[a-z]+$` or `^\d+$`. */
const FALLBACK_TEXTS = ['example', 'abc', 'ABC', 'a1', '123', '0', 'a', ''];

export function exampleString(schema: SchemaObject, hints: ScalarHints): string {
  const minimum = nonNegativeInteger(schema.minLength) ?? 0;
  const maximum = nonNegativeInteger(schema.maxLength) ?? Number.POSITIVE_INFINITY;
  if (minimum > maximum) throw new BuildFailure(hints.path, `minLength ${minimum} exceeds maxLength ${maximum}`);
  // `minLength: 1e9` made String.repeat throw a RangeError, a 500; past this it is a 400 naming the place.
  if (minimum > LONGEST_EXAMPLE_STRING)
    throw new BuildFailure(
      hints.path,
      `minLength ${minimum} is over the ${LONGEST_EXAMPLE_STRING} characters the scripted backend writes`,
    );
  const sources = [schema.pattern, ...stringList(schema[EXTRA_PATTERNS_KEYWORD])].filter(
    (source): source is string => typeof source === 'string',
  );
  const patterns = sources.flatMap((source) => compilePattern(source) ?? []);
  const fits = (text: string): boolean => {
    const length = codePointLength(text);
    return length >= minimum && length <= maximum && patterns.every((pattern) => pattern.test(text));
  };
  const candidates = stringCandidates(schema, hints, sources);
  for (const candidate of candidates) {
    const fitted = fitLength(candidate, minimum, maximum);
    const chosen = [candidate, fitted].find(fits);
    if (chosen !== undefined) return chosen;
  }
  // A pattern beyond what textMatchingPattern can write still gets a string of the right length.
  return fitLength(candidates[0] ?? '', minimum, maximum);
}

function stringCandidates(schema: SchemaObject, hints: ScalarHints, patternSources: readonly string[]): string[] {
  const format = typeof schema.format === 'string' ? FORMAT_EXAMPLES.get(schema.format)?.(hints.variant) : undefined;
  const named = hints.propertyName === undefined ? 'example' : `example ${hints.propertyName}`;
  const plausible = hints.variant === 0 ? named : `${named} ${hints.variant + 1}`;
  const minimal = patternSources.map((source) => textMatchingPattern(source, false) ?? '');
  // Merged schemas can carry several patterns; "^a" and "z$" are both met by their texts joined.
  const joined = patternSources.length > 1 ? [minimal.join('')] : [];
  const generated = [...minimal, ...patternSources.map((source) => textMatchingPattern(source, true) ?? ''), ...joined];
  const all = [format ?? [], plausible, ...(patternSources.length > 0 ? [...generated, ...FALLBACK_TEXTS] : [])];
  return [...new Set(all.flat())];
}

/** JSON Schema counts lengths in code points, not UTF-16 units. */
function codePointLength(text: string): number {
  return Array.from(text).length;
}

function fitLength(text: string, minimum: number, maximum: number): string {
  let fitted = text;
  if (codePointLength(fitted) < minimum) {
    // Repeating the text reads better than padding with one filler character.
    const unit = text === '' ? 'x' : `${text} `;
    fitted = Array.from(unit.repeat(Math.ceil(minimum / codePointLength(unit)) + 1))
      .slice(0, minimum)
      .join('');
  }
  return codePointLength(fitted) > maximum ? Array.from(fitted).slice(0, maximum).join('') : fitted;
}

interface Bound {
  readonly value: number;
  readonly exclusive: boolean;
}

/** The tighter of the inclusive keyword and the exclusive one (a number in 2020-12, a flag on the inclusive one in draft-04). */
function boundOf(schema: SchemaObject, inclusive: string, exclusive: string, direction: 1 | -1): Bound | undefined {
  const inclusiveValue = schema[inclusive];
  const exclusiveValue = schema[exclusive];
  const bounds: Bound[] = [];
  if (typeof inclusiveValue === 'number') bounds.push({ value: inclusiveValue, exclusive: exclusiveValue === true });
  if (typeof exclusiveValue === 'number') bounds.push({ value: exclusiveValue, exclusive: true });
  const tighter = (first: Bound, second: Bound): Bound =>
    first.value * direction > second.value * direction || (first.value === second.value && first.exclusive)
      ? first
      : second;
  return bounds.reduce<Bound | undefined>(
    (best, bound) => (best === undefined ? bound : tighter(best, bound)),
    undefined,
  );
}

/** Rounds away float noise such as 0.30000000000000004 and turns -0 into 0. */
function tidy(value: number): number {
  const rounded = Number(value.toPrecision(15));
  return rounded === 0 ? 0 : rounded;
}

/** An integer or number inside the bounds and on the `multipleOf` grid, as near 1 + variant as the bounds allow. */
export function exampleNumber(schema: SchemaObject, integer: boolean, hints: ScalarHints): number {
  const lower = boundOf(schema, 'minimum', 'exclusiveMinimum', 1);
  const upper = boundOf(schema, 'maximum', 'exclusiveMaximum', -1);
  const multipleOf = typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : undefined;
  const accepts = (value: number): boolean =>
    Number.isFinite(value) &&
    // JSON.stringify writes integers from 1e21 up in exponent form, which is no integer literal.
    Math.abs(value) < 1e21 &&
    (!integer || Number.isInteger(value)) &&
    (multipleOf === undefined || Number.isInteger(value / multipleOf)) &&
    (lower === undefined || value > lower.value || (!lower.exclusive && value === lower.value)) &&
    (upper === undefined || value < upper.value || (!upper.exclusive && value === upper.value));
  for (const candidate of numberCandidates(multipleOf ?? 1, lower, upper, hints.variant)) {
    if (accepts(candidate)) return candidate;
  }
  throw new BuildFailure(hints.path, `no ${integer ? 'integer' : 'number'} meets the bounds and multipleOf`);
}

const GRID_STEPS_TRIED = 64;

function* numberCandidates(
  step: number,
  lower: Bound | undefined,
  upper: Bound | undefined,
  variant: number,
): Generator<number> {
  const lowestIndex = lower === undefined ? undefined : Math.ceil(lower.value / step);
  const highestIndex = upper === undefined ? undefined : Math.floor(upper.value / step);
  let start = 1 + variant;
  if (lowestIndex !== undefined && start < lowestIndex) start = lowestIndex + variant;
  const downward = highestIndex !== undefined && start > highestIndex;
  if (downward) start = highestIndex - variant;
  for (let offset = 0; offset < GRID_STEPS_TRIED; offset += 1) {
    yield tidy((downward ? start - offset : start + offset) * step);
  }
  // Off the grid: a number squeezed between bounds with no whole step inside them.
  if (lower !== undefined) yield lower.value;
  if (upper !== undefined) yield upper.value;
  if (lower !== undefined && upper !== undefined) yield tidy((lower.value + upper.value) / 2);
}
