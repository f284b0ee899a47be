/**
 * gbnf-limits.ts against llama.cpp's own parser: on generated grammars, it refuses exactly those
 * that node-llama-cpp fails to parse, and names the rule's schema. And the key exclusion that
 * used to nest one group per character compiles for long and many names.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Llama } from 'node-llama-cpp';
import { llamaRuntime } from '../src/backends/llama-cpp/llama-runtime.js';
import { assertParserLimits, type GrammarRule } from '../src/grammar/gbnf-limits.js';
import { GrammarCompileError, jsonSchemaToGbnf } from '../src/grammar/json-schema-to-gbnf.js';

let llama: Llama;
before(async () => {
  llama = await llamaRuntime('none');
});

async function llamaParses(rules: readonly GrammarRule[]): Promise<boolean> {
  try {
    await llama.createGrammar({ grammar: rules.map((rule) => `${rule.name} ::= ${rule.body}`).join('\n') });
    return true;
  } catch {
    return false;
  }
}

function randomSource(seed: number): (limit: number) => number {
  let state = seed;
  return (limit) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return Math.floor((state / 2 ** 31) * limit);
  };
}

/**
 * Repetitions for atoms that match at least one character, and bounded ones for anything: an
 * unbounded repetition of an item that can match nothing is left recursion, which llama.cpp
 * refuses for reasons of its own (and this compiler never writes).
 */
const ATOM_QUANTIFIERS = ['', '', '?', '*', '+', '{2,}', '{3}', '{0,40}', '{1,2500}', '{2001}'];
const BOUNDED_QUANTIFIERS = ['', '', '?', '?', '{2}', '{0,3}', '{1,2}'];

/**
 * A sequence of atoms and groups, some groups wide enough, in rules made by their parts, to pass
 * llama.cpp's limit when repeated; rule names only of later rules, so nothing recurses.
 */
function randomBody(next: (limit: number) => number, index: number, count: number, depth: number): string {
  const items: string[] = [];
  const width = depth === 1 && next(2) === 0 ? next(400) : next(4) + 1;
  for (let item = 0; item < width; item += 1) {
    const kind = next(depth < 3 ? 4 : 3);
    if (kind === 0) items.push(`"x${next(9)}"${ATOM_QUANTIFIERS[next(ATOM_QUANTIFIERS.length)]}`);
    else if (kind === 1) items.push(`[a-z]${ATOM_QUANTIFIERS[next(ATOM_QUANTIFIERS.length)]}`);
    else if (kind === 2 && index + 1 < count)
      items.push(`r${index + 1 + next(count - index - 1)}${BOUNDED_QUANTIFIERS[next(BOUNDED_QUANTIFIERS.length)]}`);
    else if (kind === 2) items.push('"end"');
    else {
      const alternative = next(3) === 0 ? ` | ${randomBody(next, index, count, depth + 1)}` : '';
      items.push(
        `(${randomBody(next, index, count, depth + 1)}${alternative})${BOUNDED_QUANTIFIERS[next(BOUNDED_QUANTIFIERS.length)]}`,
      );
    }
  }
  return items.join(' ');
}

test('on 150 generated grammars, the check refuses exactly what llama.cpp fails to parse', async () => {
  const next = randomSource(2000);
  let refused = 0;
  for (let round = 0; round < 150; round += 1) {
    const count = next(5) + 1;
    const rules = Array.from({ length: count }, (_, index) => ({
      name: index === 0 ? 'root' : `r${index}`,
      body: randomBody(next, index, count, 0),
      path: `#/rule/${index}`,
    }));
    let checked = true;
    try {
      assertParserLimits(rules);
    } catch (error) {
      assert.ok(error instanceof GrammarCompileError);
      checked = false;
      refused += 1;
    }
    assert.equal(checked, await llamaParses(rules), rules.map((rule) => `${rule.name} ::= ${rule.body}`).join('\n'));
  }
  assert.ok(refused > 10 && refused < 140, `${refused} of 150 refused: both sides must be exercised`);
});

test('a refused rule is named by the schema it was compiled for', () => {
  const rules = [
    { name: 'root', body: 'a', path: '#' },
    { name: 'a', body: '("x" ("y" [a-z]*)?){0,1000}', path: '#/properties/tags' },
  ];
  assert.throws(
    () => assertParserLimits(rules),
    (error: unknown) => {
      assert.ok(error instanceof GrammarCompileError);
      assert.equal(error.path, '#/properties/tags');
      return true;
    },
  );
});

const stringProperty = { type: 'string' };

test('extra keys beside a 700-character name, or beside 120 names, compile to a grammar llama.cpp parses', async () => {
  const longName = { type: 'object', properties: { ['p'.repeat(700)]: stringProperty }, additionalProperties: true };
  const manyNames = {
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: 120 }, (_, index) => [`field_${index}_name`, stringProperty])),
    additionalProperties: true,
  };
  for (const schema of [longName, manyNames]) await llama.createGrammar({ grammar: jsonSchemaToGbnf(schema) });
});

test('extra keys beside names of more than 8,192 characters in all are refused at the object', () => {
  const properties = Object.fromEntries(Array.from({ length: 9 }, (_, index) => [`${index}${'q'.repeat(1000)}`, {}]));
  const schema = { type: 'object', properties: { inner: { type: 'object', properties, additionalProperties: true } } };
  assert.throws(
    () => jsonSchemaToGbnf(schema),
    (error: unknown) => {
      assert.ok(error instanceof GrammarCompileError);
      assert.equal(error.path, '#/properties/inner');
      return true;
    },
  );
});
