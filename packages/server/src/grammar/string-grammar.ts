/**
 * String schemas with `minLength`, `maxLength` or `pattern` to GBNF (issue 35: Claude Code's
 * tools bound string lengths, `ListAgents.q` to 256 and `ReportFindings`' `short_summary` to 60,
 * and write patterns). A length counts characters; `string-char` matches one, an escape
 * included, so `string-char{m,n}` holds the length (a character outside the BMP written as two
 * `\u` escapes counts twice: narrowing). Lengths above STRING_LENGTH_LIMIT, and a pattern beside
 * a length (their intersection is not compiled), throw GrammarCompileError.
 */
import type { RuleRegistry, RuleTarget } from './gbnf-rules.js';
import { patternGbnf } from './pattern-grammar.js';
import { childPointer } from '../json-schema/json-pointer.js';
import type { SchemaObject } from '../json-schema/schema-object.js';
import { GrammarCompileError, readCount } from './schema-reading.js';

/** The keywords that constrain a string. */
export const STRING_KEYWORDS = ['minLength', 'maxLength', 'pattern'] as const;

/**
 * Longest length bound compiled: llama.cpp expands `x{m,n}` into about n rules, and reads an n
 * over 2,000 as no bound at all. A larger bound (Claude Code's `Workflow.script`, 524,288) is
 * left to the check after generation.
 */
export const STRING_LENGTH_LIMIT = 256;

export function hasStringKeywords(schema: SchemaObject): boolean {
  return STRING_KEYWORDS.some((keyword) => Object.hasOwn(schema, keyword));
}

/** A GBNF atom for the JSON strings `schema`'s string keywords allow. */
export function compileString(schema: SchemaObject, path: string, target: RuleTarget, registry: RuleRegistry): string {
  const minimum = readCount(schema, 'minLength', path);
  const maximum = readCount(schema, 'maxLength', path);
  const pattern = schema.pattern;
  const character = registry.primitive('string-char');
  if (pattern !== undefined) {
    if (typeof pattern !== 'string')
      throw new GrammarCompileError(childPointer(path, 'pattern'), '"pattern" must be a string');
    const beside = minimum !== undefined ? 'minLength' : maximum !== undefined ? 'maxLength' : undefined;
    if (beside !== undefined)
      throw new GrammarCompileError(childPointer(path, beside), `unsupported "${beside}" beside "pattern"`);
    return registry.defineTarget(target, `"\\"" ${patternGbnf(pattern, path, character)} "\\""`);
  }
  for (const [keyword, bound] of [
    ['minLength', minimum],
    ['maxLength', maximum],
  ] as const) {
    if (bound !== undefined && bound > STRING_LENGTH_LIMIT)
      throw new GrammarCompileError(
        childPointer(path, keyword),
        `unsupported "${keyword}" above ${STRING_LENGTH_LIMIT}`,
      );
  }
  const least = minimum ?? 0;
  if (maximum !== undefined && maximum < least)
    throw new GrammarCompileError(path, '"minLength" exceeds "maxLength"; no string is valid');
  const count = maximum === undefined ? `{${least},}` : least === maximum ? `{${least}}` : `{${least},${maximum}}`;
  return registry.defineTarget(target, `"\\"" ${character}${count} "\\""`);
}
