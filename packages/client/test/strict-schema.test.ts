import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertStrictSchema, StrictSchemaError, toStrictSchema } from '@model-messages/client';
import { mapSubschemas } from '../src/strict-schema.js';

test('assertStrictSchema names the keyword and its path', () => {
  const schema = { type: 'object', properties: { tags: { type: 'array', items: { type: 'string', maxLength: 10 } } } };
  assert.throws(
    () => assertStrictSchema(schema),
    (error: unknown) => {
      assert.ok(error instanceof StrictSchemaError, 'error instanceof StrictSchemaError');
      assert.equal(error.keyword, 'maxLength');
      assert.equal(error.path, 'properties.tags.items');
      assert.match(error.message, /"maxLength".*properties\.tags\.items|properties\.tags\.items.*"maxLength"/);
      return true;
    },
  );
});

test('assertStrictSchema accepts the strict keyword list and requires an object root', () => {
  assertStrictSchema({
    type: 'object',
    properties: { kind: { enum: ['a', 'b'] }, note: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    required: ['kind'],
    additionalProperties: false,
    $defs: {},
  });
  assert.throws(() => assertStrictSchema({ type: 'array', items: {} }), /type "object"/);
});

test('toStrictSchema moves unsupported keywords into the description, node by node', () => {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      name: { type: 'string', description: 'Full name.', maxLength: 40, pattern: '^[A-Z]' },
      born: { type: 'string', format: 'date' },
      scores: { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0, maximum: 100 } },
      owner: { $ref: '#/$defs/person' },
    },
    required: ['name'],
    additionalProperties: false,
    $defs: { person: { type: 'object', properties: { email: { type: 'string', format: 'email' } }, default: {} } },
  };
  const strict = toStrictSchema(schema);
  assertStrictSchema(strict);
  const properties = strict.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(properties.name, {
    type: 'string',
    description: 'Full name. (Constraints: {"maxLength":40,"pattern":"^[A-Z]"})',
  });
  assert.deepEqual(properties.born, { type: 'string', description: 'Constraints: {"format":"date"}' });
  assert.equal(properties.scores?.description, 'Constraints: {"minItems":1}');
  assert.deepEqual(properties.scores?.items, {
    type: 'integer',
    description: 'Constraints: {"minimum":0,"maximum":100}',
  });
  assert.deepEqual(properties.owner, { $ref: '#/$defs/person' });
  assert.match(String((strict.$defs as Record<string, Record<string, unknown>>).person?.description), /"default":\{\}/);
  assert.equal(strict.$schema, undefined, '$schema constrains nothing and is dropped');
  assert.equal(
    (schema.properties.name as Record<string, unknown>).maxLength,
    40,
    "the caller's schema is left as it was",
  );
});

test('toStrictSchema turns oneOf into anyOf and describes what has no strict form', () => {
  const strict = toStrictSchema({
    type: 'object',
    properties: {
      value: { oneOf: [{ type: 'string' }, { type: 'number', multipleOf: 5 }] },
      pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
      both: { allOf: [{ type: 'string' }] },
    },
  });
  assertStrictSchema(strict);
  const properties = strict.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(properties.value, {
    anyOf: [{ type: 'string' }, { type: 'number', description: 'Constraints: {"multipleOf":5}' }],
  });
  assert.deepEqual(properties.pair, {
    type: 'array',
    items: {},
    description: 'Constraints: {"items":[{"type":"string"},{"type":"number"}]}',
  });
  assert.deepEqual(properties.both, { description: 'Constraints: {"allOf":[{"type":"string"}]}' });
});

test('property names and enum values that look like keywords are left alone', () => {
  const schema = {
    type: 'object',
    properties: { format: { type: 'string' }, pattern: { enum: [{ maxLength: 1 }] } },
    required: ['format'],
  };
  assert.deepEqual(toStrictSchema(schema), schema);
});

test('mapSubschemas replaces the subschemas a node holds directly, and nothing else', () => {
  const node = {
    type: 'object',
    properties: { a: { type: 'string' } },
    $defs: { d: { type: 'integer' } },
    anyOf: [{ type: 'object' }],
    items: { type: 'string' },
    additionalProperties: false,
    enum: [{ type: 'string' }],
    const: { type: 'x' },
    required: ['a'],
  };
  const mark = (subschema: unknown) => ({ seen: subschema });
  assert.deepEqual(mapSubschemas(node, mark), {
    type: 'object',
    properties: { a: { seen: { type: 'string' } } },
    $defs: { d: { seen: { type: 'integer' } } },
    anyOf: [{ seen: { type: 'object' } }],
    items: { seen: { type: 'string' } },
    additionalProperties: { seen: false },
    enum: [{ type: 'string' }],
    const: { type: 'x' },
    required: ['a'],
  });
  assert.deepEqual(
    mapSubschemas({ items: [{ type: 'string' }] }, mark),
    { items: [{ type: 'string' }] },
    'a tuple list is data here',
  );
});
