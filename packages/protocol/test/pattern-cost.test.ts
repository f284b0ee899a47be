import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RE2JS } from 're2js';
import { patternCost } from '../src/pattern-cost.js';

/** The program RE2 compiles, read from re2js's internals (`re2Input.prog`): what the estimate bounds. */
function compiledProgram(pattern: string): { instructions: number; runes: number } {
  const program = (RE2JS.compile(pattern) as unknown as { re2Input: { prog: { inst: Array<{ runes?: number[] }> } } })
    .re2Input.prog;
  return {
    instructions: program.inst.length,
    runes: program.inst.reduce((sum, instruction) => sum + (instruction.runes?.length ?? 0), 0),
  };
}

describe('the cost of a pattern, read before RE2 compiles it', () => {
  const patterns = [
    '^a$',
    '^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$',
    '^(\\d{4})-(\\d{2})-(\\d{2})$',
    'a{1000}',
    '[a-z]{1000}',
    '[^a]{1000}',
    '(\\pL{1000})',
    '\\pL{500}\\pN{500}',
    '\\p{Greek}{1000}',
    '[^\\pL]{300}',
    '(x|y|z){1000}',
    '(a{10}){100}',
    '((ab){10}c){10}',
    '\\w{1000}\\W{1000}',
    '(?i)[a-z]{1000}',
    '(?i)\\pL{500}',
    '(?P<year>\\d{4})',
    '(?s).{1000}',
    '.{2,999}',
    '[[:alpha:]]{100}',
    '\\Qa{9}\\E{5}',
    'a{3,}',
    'literal { brace',
  ];

  for (const pattern of patterns) {
    test(`${pattern}: at least the program RE2 compiles`, () => {
      const estimate = patternCost(pattern);
      const actual = compiledProgram(pattern);
      assert.ok(estimate.instructions >= actual.instructions, `${estimate.instructions} < ${actual.instructions}`);
      assert.ok(estimate.runes >= actual.runes, `${estimate.runes} < ${actual.runes}`);
    });
  }

  test('and not far above it for counted repetitions, which is what the budget is for', () => {
    for (const pattern of ['a{1000}', '[a-z]{1000}', '(a{10}){100}', '\\w{1000}']) {
      const estimate = patternCost(pattern);
      const actual = compiledProgram(pattern);
      assert.ok(estimate.instructions <= actual.instructions * 1.1, `${pattern}: ${estimate.instructions}`);
    }
  });
});
