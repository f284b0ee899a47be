/**
 * The regular expressions one schema may compile (issue 31). Ajv hands each `pattern` and
 * `patternProperties` name to RE2 while it compiles a validator, on the event loop; RE2's compile
 * grows with the program it unrolls (pattern-cost.ts), so a schema's patterns are charged, before
 * each is compiled, against a budget that keeps the compile within tens of milliseconds and a few
 * MB. A schema past it is refused naming the pattern; the strict keywords have no patterns at all.
 */
import { patternCost } from './pattern-cost.js';

/** What one schema's patterns may compile to, together: about 35 ms and 8 MB here. */
export const PATTERN_LIMITS = { instructions: 50_000, runes: 1_000_000 } as const;

/** A compile's patterns went past PATTERN_LIMITS; the compile stops at that pattern. */
export class PatternBudgetError extends Error {}

interface Budget {
  instructions: number;
  runes: number;
}

/** The budget of the compile under way: compiles are synchronous, so there is at most one. */
let current: Budget | undefined;

/** Runs `compile` with a fresh budget; answers its result and what its patterns cost. */
export function withPatternBudget<Result>(compile: () => Result): { result: Result; runes: number } {
  const outer = current;
  const budget: Budget = { instructions: 0, runes: 0 };
  current = budget;
  try {
    return { result: compile(), runes: budget.runes };
  } finally {
    current = outer;
  }
}

/** Charges `pattern` to the compile under way; throws PatternBudgetError past the budget. */
export function chargePattern(pattern: string): void {
  if (current === undefined) return;
  const cost = patternCost(pattern);
  current.instructions += cost.instructions;
  current.runes += cost.runes;
  const over =
    current.instructions > PATTERN_LIMITS.instructions
      ? `${PATTERN_LIMITS.instructions} regular-expression instructions`
      : current.runes > PATTERN_LIMITS.runes
        ? `${PATTERN_LIMITS.runes} character-range bounds`
        : undefined;
  if (over !== undefined)
    throw new PatternBudgetError(
      `the pattern ${JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 80)}...` : pattern)} takes the schema's patterns past ${over} (counted repetitions such as {1000} unroll); use fewer or simpler patterns`,
    );
}
