/**
 * `$ref` and `anyOf` beside other keywords: every keyword holds, so the grammar must admit the
 * values valid against all of them together. These shapes pass the strict keyword list and used
 * to be refused by the compiler (a 500 for a strict tool); the cases that are still refused say
 * where, for the 400 that names the schema path.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Llama } from 'node-llama-cpp';
import { llamaRuntime } from '../src/backends/llama-cpp/llama-runtime.js';
import { GrammarCompileError, jsonSchemaToGbnf } from '../src/grammar/json-schema-to-gbnf.js';
import {
  grammarAccepts,
  integer,
  schemaAccepts,
  string,
  type GrammarCase,
  type JsonSchema,
} from './grammar-admission.js';

const cases: readonly GrammarCase[] = [
  {
    name: 'type beside anyOf: the type holds in every branch',
    schema: {
      type: 'object',
      anyOf: [
        { properties: { a: integer }, required: ['a'] },
        { properties: { b: string }, required: ['b'] },
      ],
    },
    valid: ['{"a":1}', '{"b":"x"}'],
    invalid: ['{}', '{"a":"x"}', '{"b":1}', '1', '"x"', 'null'],
    narrowed: ['{"a":1,"b":"x"}'],
  },
  {
    name: 'type beside anyOf of enums',
    schema: { type: 'string', anyOf: [{ enum: ['a', 1] }, { enum: ['b'] }] },
    valid: ['"a"', '"b"'],
    invalid: ['1', '"c"', 'null'],
  },
  {
    name: 'a branch the type excludes is dropped',
    schema: { type: 'integer', anyOf: [{ type: 'number' }, { type: 'string' }] },
    valid: ['1', '-3'],
    invalid: ['1.5', '"s"'],
  },
  {
    name: 'type beside $ref: the target narrowed to the type',
    schema: {
      type: 'object',
      $ref: '#/$defs/x',
      $defs: { x: { properties: { n: integer }, required: ['n'], additionalProperties: false } },
    },
    valid: ['{"n":1}'],
    invalid: ['5', '"s"', '{}', '{"n":"a"}', '{"n":1,"m":2}'],
  },
  {
    name: 'object keywords beside anyOf merge property by property',
    schema: {
      type: 'object',
      properties: { kind: { enum: ['x', 'y'] }, x: integer, y: string },
      required: ['kind'],
      additionalProperties: false,
      anyOf: [
        { properties: { kind: { const: 'x' } }, required: ['x'] },
        { properties: { kind: { const: 'y' } }, required: ['y'] },
      ],
    },
    valid: ['{"kind":"x","x":1}', '{"kind":"y","y":"s"}', '{"kind":"x","x":1,"y":"s"}'],
    invalid: ['{"kind":"x"}', '{"kind":"x","y":"s"}', '{"kind":"z","x":1}', '{"kind":"x","x":1,"z":1}'],
  },
  {
    name: "a property declared on one side only takes the other side's additionalProperties",
    schema: { type: 'object', additionalProperties: integer, anyOf: [{ properties: { a: { type: 'number' } } }] },
    valid: ['{"a":1}', '{"b":2}', '{}'],
    invalid: ['{"a":1.5}', '{"b":"x"}'],
  },
  {
    name: '$ref beside type into a recursive definition',
    schema: {
      type: 'object',
      $ref: '#/$defs/node',
      $defs: {
        node: {
          type: ['object', 'null'],
          properties: { next: { $ref: '#/$defs/node' } },
          required: ['next'],
          additionalProperties: false,
        },
      },
    },
    valid: ['{"next":null}', '{"next":{"next":null}}'],
    invalid: ['null', '{}', '{"next":1}'],
  },
  {
    name: 'array keywords beside anyOf: items intersect, the tighter bounds win',
    schema: {
      type: 'array',
      items: { type: 'number' },
      maxItems: 3,
      anyOf: [{ items: integer, minItems: 2 }, { maxItems: 0 }],
    },
    valid: ['[1,2]', '[1,2,3]', '[]'],
    invalid: ['[1]', '[1.5,2]', '[1,2,3,4]'],
  },
];

let llama: Llama;
before(async () => {
  llama = await llamaRuntime('none');
});

for (const intersectionCase of cases) {
  test(`grammar admits exactly what all keywords admit: ${intersectionCase.name}`, async () => {
    const grammar = await llama.createGrammar({ grammar: jsonSchemaToGbnf(intersectionCase.schema) });
    for (const text of intersectionCase.valid) {
      assert.ok(schemaAccepts(intersectionCase.schema, text), `test claim: ${text} is schema-valid`);
      assert.ok(grammarAccepts(grammar, text), `grammar should accept ${text}`);
    }
    for (const text of intersectionCase.invalid) {
      assert.ok(!schemaAccepts(intersectionCase.schema, text), `test claim: ${text} is invalid`);
      assert.ok(!grammarAccepts(grammar, text), `grammar should reject ${text}`);
    }
    for (const text of intersectionCase.narrowed ?? []) {
      assert.ok(schemaAccepts(intersectionCase.schema, text), `test claim: ${text} is schema-valid`);
      assert.ok(!grammarAccepts(grammar, text), `grammar should reject (by design) ${text}`);
    }
  });
}

const refused: readonly [JsonSchema, string, string][] = [
  // Each enum value would have to be checked against the object keywords.
  [{ type: 'object', properties: { a: integer }, anyOf: [{ const: { a: 1 } }] }, 'properties', '#/anyOf/0/properties'],
  // Inlining the target into itself would never end.
  [
    {
      $defs: { n: { type: 'object', properties: { next: { type: 'object', $ref: '#/$defs/n' } } } },
      $ref: '#/$defs/n',
    },
    'recursion',
    '#/$defs/n/properties/next',
  ],
  [{ type: 'string', anyOf: [integer, { type: 'boolean' }] }, 'no value', '#'],
];

test('intersections that are not compiled throw GrammarCompileError naming the place', () => {
  for (const [schema, construct, path] of refused) {
    assert.throws(
      () => jsonSchemaToGbnf(schema),
      (error: unknown) => {
        assert.ok(
          error instanceof GrammarCompileError,
          `expected GrammarCompileError for ${JSON.stringify(schema)}, got ${String(error)}`,
        );
        assert.ok(error.message.includes(construct), `message "${error.message}" should name ${construct}`);
        assert.equal(error.path, path);
        return true;
      },
    );
  }
});
