/**
 * One `$ref` resolver (src/json-schema/reference-resolution.ts) behind the grammar compiler and
 * the scripted backend's instance builder, reading references as protocol's validator (Ajv)
 * does: a reference the request passed names the same schema for all three.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Llama } from 'node-llama-cpp';
import { llamaRuntime } from '../src/backends/llama-cpp/llama-runtime.js';
import { compileSchema } from '@model-messages/protocol';
import { exampleInstance } from '../src/backends/scripted/schema-instance.js';
import { jsonSchemaToGbnf } from '../src/grammar/json-schema-to-gbnf.js';
import { resolveReference } from '../src/json-schema/reference-resolution.js';
import { grammarAccepts } from './grammar-admission.js';

/** Each definition allows one string, so which one a reference reached shows in the value. */
const definitions = {
  'a%b': { type: 'string', const: 'percent' },
  'a/b': { type: 'string', const: 'slash' },
  a: { b: { type: 'string', const: 'nested' } },
  'a%25b': { type: 'string', const: 'percent 25' },
  'a b': { type: 'string', const: 'space' },
  é: { type: 'string', const: 'accent' },
};
const allValues = ['percent', 'slash', 'nested', 'percent 25', 'space', 'accent'];

const pointing = (reference: string) => ({
  type: 'object',
  properties: { x: { $ref: reference } },
  required: ['x'],
  additionalProperties: false,
  $defs: definitions,
});

/** A reference, the pointer it names, and the value the schema there allows. */
const references: ReadonlyArray<[string, string, string]> = [
  ['#/$defs/a%25b', '#/$defs/a%b', 'percent'],
  // Split at "/" before decoding, as Ajv does: %2F is a "/" inside a key, not a separator.
  ['#/%24defs/a%2Fb', '#/$defs/a~1b', 'slash'],
  ['#/$defs/a~1b', '#/$defs/a~1b', 'slash'],
  ['#/$defs/a/b', '#/$defs/a/b', 'nested'],
  ['#/$defs/a%2525b', '#/$defs/a%25b', 'percent 25'],
  ['#/$defs/a%20b', '#/$defs/a b', 'space'],
  ['#/$defs/%C3%A9', '#/$defs/é', 'accent'],
];

/** A tree through the root: `$ref: "#"` (or `"#/"`, which Ajv reads as the root too). */
const tree = (reference: string) => ({
  type: 'object',
  properties: { child: { anyOf: [{ $ref: reference }, { type: 'null' }] } },
  required: ['child'],
  additionalProperties: false,
});

let llama: Llama;
before(async () => {
  llama = await llamaRuntime('none');
});

async function grammarFor(schema: unknown) {
  return llama.createGrammar({ grammar: jsonSchemaToGbnf(schema) });
}

for (const [reference, pointer, value] of references) {
  test(`"${reference}" names ${pointer} for the validator, the scripted backend and the grammar alike`, async () => {
    const schema = pointing(reference);
    assert.equal(resolveReference(schema, reference).pointer, pointer);
    const validate = compileSchema(schema, 'schema');
    assert.deepEqual(
      allValues.filter((candidate) => validate({ x: candidate })),
      [value],
      'the validator (Ajv) reaches it',
    );
    assert.deepEqual(exampleInstance(schema), { x: value });
    const grammar = await grammarFor(schema);
    assert.deepEqual(
      allValues.filter((candidate) => grammarAccepts(grammar, JSON.stringify({ x: candidate }))),
      [value],
    );
  });
}

for (const reference of ['#', '#/']) {
  test(`"$ref": "${reference}" recurses through the root in the validator, the scripted backend and the grammar`, async () => {
    const schema = tree(reference);
    assert.equal(resolveReference(schema, reference).pointer, '#');
    const validate = compileSchema(schema, 'schema');
    const instance = exampleInstance(schema);
    assert.ok(validate(instance), JSON.stringify(instance));
    const grammar = await grammarFor(schema);
    for (const text of ['{"child":null}', '{"child":{"child":{"child":null}}}'])
      assert.ok(validate(JSON.parse(text)) && grammarAccepts(grammar, text), text);
    for (const text of ['{"child":1}', '{"child":{"child":{}}}'])
      assert.ok(!validate(JSON.parse(text)) && !grammarAccepts(grammar, text), text);
  });
}

test('anchors and the root $id resolve to the pointer of the schema they name', () => {
  const schema = {
    $id: 'https://example.com/shapes',
    $defs: { point: { $anchor: 'point', type: 'array' }, old: { $id: '#legacy', type: 'string' } },
  };
  assert.equal(resolveReference(schema, '#point').pointer, '#/$defs/point');
  assert.equal(resolveReference(schema, 'https://example.com/shapes#legacy').pointer, '#/$defs/old');
  assert.equal(resolveReference(schema, 'https://example.com/shapes#/$defs/point').target, schema.$defs.point);
});

test('a reference with no target says why: another document, a missing key, bad percent-encoding, no such anchor', () => {
  const schema = pointing('#');
  assert.deepEqual(
    ['other.json#/a', '#/$defs/missing', '#/$defs/a%b', '#nowhere', 7].map(
      (reference) => resolveReference(schema, reference).problem,
    ),
    [
      'unsupported "$ref" "other.json#/a" (only references within this schema)',
      '"$ref" target #/$defs/missing does not exist',
      'malformed "$ref" "#/$defs/a%b" (bad percent-encoding)',
      '"$ref" "#nowhere" names no anchor in this schema',
      '"$ref" must be a string, got 7',
    ],
  );
});
