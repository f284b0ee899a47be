/**
 * A regular expression the model writes for tool search (issue 34), compiled as the schemas'
 * patterns are: by RE2 (re2js), which runs in time linear in the text, after its compile cost is
 * read from its text (pattern-cost.ts), so that no pattern can hold the event loop. The public
 * tool search reads Python's `re` syntax; RE2 reads the same for what tool search patterns use
 * (classes, alternatives, `.*`, `(?i)`), and a pattern it cannot read (a backreference, a
 * lookaround) is the call's error, with RE2's reason.
 */
import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';
import { patternCost } from './pattern-cost.js';

/** Far more than a 200-character pattern of plain words needs, far less than a slow compile. */
const MAX_INSTRUCTIONS = 10_000;

/** Loaded at the first search, as the schema validator loads it at the first compile. */
const require = createRequire(import.meta.url);
let re2: typeof RE2JS | undefined;

export type SearchPattern = { test(text: string): boolean } | { problem: string };

export function compileSearchPattern(pattern: string): SearchPattern {
  if (patternCost(pattern).instructions > MAX_INSTRUCTIONS)
    return { problem: 'the pattern compiles to too large a program (counted repetitions unroll)' };
  re2 ??= (require('re2js') as typeof import('re2js')).RE2JS;
  try {
    const compiled = re2.compile(pattern);
    return { test: (text) => compiled.matcher(text).find() };
  } catch (error) {
    return { problem: (error as Error).message };
  }
}
