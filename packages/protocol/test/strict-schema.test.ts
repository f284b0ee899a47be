import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSchemaProblem, STRICT_SCHEMA_KEYWORDS } from '@model-messages/protocol';

test('the accepted keyword list is exactly the spec list', () => {
  assert.deepEqual(
    [...STRICT_SCHEMA_KEYWORDS].sort(),
    [
      '$defs',
      '$ref',
      'additionalProperties',
      'anyOf',
      'const',
      'definitions',
      'description',
      'enum',
      'items',
      'properties',
      'required',
      'title',
      'type',
    ].sort(),
  );
});

test('property names that look like keywords are not keywords', () => {
  const schema = {
    type: 'object',
    properties: { format: { type: 'string' }, pattern: { type: 'string' } },
    required: ['format'],
  };
  assert.equal(findSchemaProblem(schema, { strict: true }), undefined);
});

test('enum and const values are data, not schemas', () => {
  assert.equal(findSchemaProblem({ enum: [{ maxLength: 3 }], const: { pattern: 'x' } }, { strict: true }), undefined);
});

test('a keyword deep inside additionalProperties and anyOf is found with its path', () => {
  const schema = {
    type: 'object',
    additionalProperties: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'number', multipleOf: 2 } }] },
  };
  assert.deepEqual(findSchemaProblem(schema, { strict: true })?.path, 'additionalProperties.anyOf.1.items');
  assert.equal(findSchemaProblem(schema, { strict: true })?.keyword, 'multipleOf');
});

test('boolean subschemas are fine; non-object schemas are a problem', () => {
  assert.equal(
    findSchemaProblem({ type: 'object', additionalProperties: false, properties: { any: true } }, { strict: true }),
    undefined,
  );
  assert.match(
    findSchemaProblem({ type: 'object', properties: { bad: 3 } }, { strict: false })?.message ?? '',
    /must be an object or a boolean/,
  );
});

test('more subschemas than the cap is a problem, found without recursion', () => {
  const group = () => ({
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: 900 }, (_, index) => [`p${index}`, { type: 'string' }])),
  });
  const properties = Object.fromEntries(Array.from({ length: 6 }, (_, index) => [`g${index}`, group()]));
  assert.match(
    findSchemaProblem({ type: 'object', properties }, { strict: false })?.message ?? '',
    /more than 4096 subschemas/,
  );
});

test('more entries than the cap in one keyword is a problem naming the keyword and path (a validator compiled from ~3,000 properties overflows the stack)', () => {
  const many = (count: number) =>
    Object.fromEntries(Array.from({ length: count }, (_, index) => [`p${index}`, { type: 'string' }]));
  assert.equal(findSchemaProblem({ type: 'object', properties: many(1000) }, { strict: true }), undefined);
  const problem = findSchemaProblem(
    { type: 'object', properties: { inner: { type: 'object', properties: many(3000) } } },
    { strict: true },
  );
  assert.deepEqual(problem, {
    path: 'properties.inner',
    message: '"properties" has 3000 entries; at most 1000 are accepted in one keyword',
  });
  assert.match(
    findSchemaProblem({ anyOf: Array.from({ length: 1001 }, () => ({ type: 'string' })) }, { strict: true })?.message ??
      '',
    /"anyOf" has 1001 entries/,
  );
  assert.match(
    findSchemaProblem(
      { type: 'string', enum: Array.from({ length: 1001 }, (_, index) => `v${index}`) },
      { strict: true },
    )?.message ?? '',
    /"enum" has 1001 entries/,
  );
});

test('more characters of names and values than a validator should be compiled from is a problem; descriptions do not count', () => {
  const long = 'n'.repeat(250_000);
  assert.match(
    findSchemaProblem({ type: 'object', required: [long] }, { strict: false })?.message ?? '',
    /names and values hold more than 200000 characters/,
  );
  assert.deepEqual(
    findSchemaProblem(
      { type: 'object', properties: { inner: { type: 'object', properties: { [long]: {} } } } },
      { strict: false },
    ),
    {
      path: 'properties.inner',
      message: "the schema's names and values hold more than 200000 characters (descriptions and titles aside)",
    },
  );
  assert.match(
    findSchemaProblem({ enum: [{ [long]: 1 }] }, { strict: true })?.message ?? '',
    /more than 200000 characters/,
  );
  assert.equal(findSchemaProblem({ type: 'string', description: long }, { strict: true }), undefined);
  assert.equal(findSchemaProblem({ type: 'string', enum: ['n'.repeat(150_000)] }, { strict: true }), undefined);
});
