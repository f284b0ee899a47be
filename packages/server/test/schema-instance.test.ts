import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  SchemaInstanceError,
  exampleInstance,
  violatingObject,
  type JsonSchema,
} from '../src/backends/scripted/schema-instance.js';

// Formats are checked by regex below: ajv-formats is not installed, and Ajv ignores formats it lacks.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

function validationErrors(schema: JsonSchema, instance: unknown): string {
  const validate = ajv.compile(schema);
  return validate(instance) ? '' : ajv.errorsText(validate.errors);
}

function assertValid(schema: JsonSchema, instance: unknown): void {
  assert.equal(validationErrors(schema, instance), '', `instance ${JSON.stringify(instance)} should be valid`);
}

function assertInvalid(schema: JsonSchema, instance: unknown): void {
  assert.notEqual(validationErrors(schema, instance), '', `instance ${JSON.stringify(instance)} should be invalid`);
}

const treeNode: JsonSchema = {
  $ref: '#/$defs/node',
  $defs: {
    node: {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
      required: ['name', 'children'],
      additionalProperties: false,
    },
  },
};

const linkedList: JsonSchema = {
  definitions: {
    cell: {
      type: 'object',
      properties: { value: { type: 'integer' }, next: { anyOf: [{ $ref: '#/definitions/cell' }, { type: 'null' }] } },
      required: ['value', 'next'],
    },
  },
  $ref: '#/definitions/cell',
};

const rootRecursive: JsonSchema = {
  type: 'object',
  properties: { label: { type: 'string' }, parent: { anyOf: [{ $ref: '#' }, { type: 'null' }] } },
  required: ['label', 'parent'],
};

const mutualRecursion: JsonSchema = {
  type: 'object',
  properties: { root: { $ref: '#/$defs/folder' } },
  required: ['root'],
  $defs: {
    folder: {
      type: 'object',
      properties: { entries: { type: 'array', items: { $ref: '#/$defs/entry' } } },
      required: ['entries'],
    },
    entry: { anyOf: [{ $ref: '#/$defs/folder' }, { type: 'string', minLength: 1 }] },
  },
};

/** Each schema with the exact instance the builder should give for it. */
const battery: ReadonlyArray<{ name: string; schema: JsonSchema; expected: unknown }> = [
  {
    name: 'flat object of scalars',
    schema: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        count: { type: 'integer' },
        ratio: { type: 'number' },
        on: { type: 'boolean' },
      },
      required: ['city', 'count', 'ratio', 'on'],
      additionalProperties: false,
    },
    expected: { city: 'example city', count: 1, ratio: 1, on: true },
  },
  {
    name: 'nested objects',
    schema: {
      type: 'object',
      properties: { address: { type: 'object', properties: { street: { type: 'string' } }, required: ['street'] } },
      required: ['address'],
    },
    expected: { address: { street: 'example street' } },
  },
  {
    name: 'optional properties are omitted',
    schema: { type: 'object', properties: { id: { type: 'string' }, note: { type: 'string' } }, required: ['id'] },
    expected: { id: 'example id' },
  },
  {
    name: 'enum takes its first value',
    schema: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    expected: 'celsius',
  },
  { name: 'enum skips values of the wrong type', schema: { type: 'string', enum: [3, 'three'] }, expected: 'three' },
  { name: 'const', schema: { const: { mode: 'fast' } }, expected: { mode: 'fast' } },
  { name: 'anyOf string or null', schema: { anyOf: [{ type: 'string' }, { type: 'null' }] }, expected: 'example' },
  { name: 'anyOf null first', schema: { anyOf: [{ type: 'null' }, { type: 'string' }] }, expected: null },
  {
    name: 'array of objects',
    schema: {
      type: 'array',
      items: {
        type: 'object',
        properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } },
        required: ['sku', 'qty'],
      },
    },
    expected: [{ sku: 'example sku', qty: 1 }],
  },
  { name: 'recursive tree through $defs', schema: treeNode, expected: { name: 'example name', children: [] } },
  { name: 'recursive list through definitions', schema: linkedList, expected: { value: 1, next: null } },
  { name: 'recursive through the root "#"', schema: rootRecursive, expected: { label: 'example label', parent: null } },
  {
    name: 'mutual recursion picks the leaf branch',
    schema: mutualRecursion,
    expected: { root: { entries: ['example entries'] } },
  },
  { name: 'type array takes the first type', schema: { type: ['integer', 'null'] }, expected: 1 },
  {
    name: 'type array skips an unsatisfiable type',
    schema: { type: ['string', 'null'], minLength: 4, maxLength: 2 },
    expected: null,
  },
  { name: 'minLength pads', schema: { type: 'string', minLength: 20 }, expected: 'example example exam' },
  { name: 'maxLength truncates', schema: { type: 'string', maxLength: 4 }, expected: 'exam' },
  {
    name: 'pattern of classes and counts',
    schema: { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' },
    expected: 'AAA-0000',
  },
  {
    name: 'pattern the plain text already meets',
    schema: { type: 'string', pattern: '^[a-z]+$' },
    expected: 'example',
  },
  {
    name: 'patterns merged from allOf',
    schema: { type: 'string', allOf: [{ pattern: '^a' }, { pattern: 'z$' }] },
    expected: 'az',
  },
  {
    name: 'pattern with groups and alternation',
    schema: { type: 'string', pattern: '^(?:red|green)(-[0-9]+)?$' },
    expected: 'red',
  },
  { name: 'integer bounds', schema: { type: 'integer', minimum: 10, maximum: 20 }, expected: 10 },
  { name: 'exclusive bounds', schema: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 }, expected: 0.5 },
  { name: 'negative maximum', schema: { type: 'integer', maximum: -5 }, expected: -5 },
  { name: 'multipleOf with a minimum', schema: { type: 'integer', multipleOf: 7, minimum: 15 }, expected: 21 },
  { name: 'fractional multipleOf', schema: { type: 'number', multipleOf: 0.1, minimum: 0.25 }, expected: 0.4 },
  {
    name: 'minItems with uniqueItems',
    schema: { type: 'array', items: { type: 'string' }, minItems: 3, uniqueItems: true },
    expected: ['example', 'example 2', 'example 3'],
  },
  { name: 'maxItems zero', schema: { type: 'array', items: { type: 'string' }, maxItems: 0 }, expected: [] },
  {
    name: 'prefixItems tuple',
    schema: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'string', enum: ['N', 'S'] }], items: false },
    expected: [1, 'N'],
  },
  {
    name: 'minProperties adds optional properties',
    schema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'boolean' } }, minProperties: 2 },
    expected: { a: 'example a', b: true },
  },
  {
    name: 'oneOf takes its first branch',
    schema: {
      oneOf: [{ type: 'object', properties: { kind: { const: 'circle' } }, required: ['kind'] }, { type: 'string' }],
    },
    expected: { kind: 'circle' },
  },
  {
    name: 'allOf merges its members',
    schema: {
      allOf: [
        { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
        { properties: { id: { minimum: 100 }, tag: { type: 'string', maxLength: 3 } }, required: ['tag'] },
      ],
    },
    expected: { id: 100, tag: 'exa' },
  },
  { name: 'default is used', schema: { type: 'string', default: 'metric' }, expected: 'metric' },
  { name: 'nullable type', schema: { type: 'string', nullable: true }, expected: 'example' },
  { name: 'untyped minLength means a string', schema: { minLength: 2 }, expected: 'example' },
  {
    name: 'untyped properties mean an object',
    schema: { properties: { q: { description: 'query' } }, required: ['q'] },
    expected: { q: 'example q' },
  },
  { name: 'untyped root means an object', schema: { description: 'no keywords' }, expected: {} },
  { name: 'true root schema', schema: true, expected: {} },
  {
    name: 'true property schema',
    schema: { type: 'object', properties: { any: true }, required: ['any'] },
    expected: { any: 'example any' },
  },
  {
    name: '$ref with sibling keywords',
    schema: {
      $defs: { text: { type: 'string' } },
      type: 'object',
      properties: { code: { $ref: '#/$defs/text', minLength: 8 } },
      required: ['code'],
    },
    expected: { code: 'example code' },
  },
  {
    name: '$ref to an $anchor',
    schema: {
      $defs: { point: { $anchor: 'point', type: 'array', items: { type: 'number' }, minItems: 2 } },
      $ref: '#point',
    },
    expected: [1, 1],
  },
  {
    name: 'additionalProperties schema fills a required name',
    schema: { type: 'object', additionalProperties: { type: 'integer' }, required: ['extra'] },
    expected: { extra: 1 },
  },
];

for (const { name, schema, expected } of battery) {
  test(`exampleInstance: ${name}`, () => {
    const instance = exampleInstance(schema);
    assertValid(schema, instance);
    assert.deepEqual(instance, expected);
  });
}

test('exampleInstance is deterministic', () => {
  for (const { schema } of battery) assert.deepEqual(exampleInstance(schema), exampleInstance(schema));
});

test('exampleInstance writes plausible strings for common formats', () => {
  const shapes: ReadonlyArray<[string, RegExp]> = [
    ['date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/],
    ['date', /^\d{4}-\d{2}-\d{2}$/],
    ['time', /^\d{2}:\d{2}:\d{2}Z$/],
    ['email', /^[^@\s]+@[^@\s]+\.[a-z]+$/],
    ['uri', /^https:\/\/[^\s]+$/],
    ['uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/],
    ['ipv4', /^(\d{1,3}\.){3}\d{1,3}$/],
  ];
  for (const [format, shape] of shapes) {
    const schema = { type: 'object', properties: { value: { type: 'string', format } }, required: ['value'] };
    const instance = exampleInstance(schema);
    assertValid(schema, instance);
    assert.match(String((instance as { value: unknown }).value), shape, format);
  }
});

test('exampleInstance keeps distinct formatted items distinct for uniqueItems', () => {
  const schema = { type: 'array', items: { type: 'string', format: 'uuid' }, minItems: 3, uniqueItems: true };
  const instance = exampleInstance(schema);
  assertValid(schema, instance);
  assert.equal(new Set(instance as string[]).size, 3);
});

test('exampleInstance never writes integers in exponent form', () => {
  const schema = { type: 'integer', minimum: 1e20 };
  const instance = exampleInstance(schema);
  assertValid(schema, instance);
  assert.equal(JSON.stringify(instance), '100000000000000000000');
});

test('exampleInstance survives deep literal nesting', () => {
  let schema: JsonSchema = { type: 'string' };
  for (let level = 0; level < 40; level += 1)
    schema = { type: 'object', properties: { inner: schema }, required: ['inner'] };
  const instance = exampleInstance(schema);
  assertValid(schema, instance);
  assert.equal(JSON.stringify(instance).split('"inner":').length - 1, 40);
});

test('exampleInstance throws SchemaInstanceError, not a stack overflow, beyond its depth limit', () => {
  let schema: JsonSchema = { type: 'string' };
  for (let level = 0; level < 2000; level += 1)
    schema = { type: 'object', properties: { inner: schema }, required: ['inner'] };
  assert.throws(() => exampleInstance(schema), SchemaInstanceError);
});

test('exampleInstance throws SchemaInstanceError naming the path for unsatisfiable schemas', () => {
  assert.throws(() => exampleInstance(false), SchemaInstanceError);
  assert.throws(
    () => exampleInstance({ type: 'object', properties: { blocked: false }, required: ['blocked'] }),
    (error: unknown) => error instanceof SchemaInstanceError && error.message.includes('#/properties/blocked'),
  );
  assert.throws(
    () =>
      exampleInstance({
        type: 'object',
        properties: { word: { type: 'string', minLength: 5, maxLength: 2 } },
        required: ['word'],
      }),
    (error: unknown) => error instanceof SchemaInstanceError && error.path === '#/properties/word',
  );
  assert.throws(() => exampleInstance({ type: 'integer', minimum: 0.2, maximum: 0.8 }), SchemaInstanceError);
  assert.throws(() => exampleInstance({ allOf: [{ type: 'string' }, { type: 'integer' }] }), SchemaInstanceError);
  assert.throws(() => exampleInstance({ enum: [] }), SchemaInstanceError);
});

test('exampleInstance throws SchemaInstanceError for references it cannot resolve', () => {
  assert.throws(
    () => exampleInstance({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } }, required: ['a'] }),
    (error: unknown) => error instanceof SchemaInstanceError && error.message.includes('#/$defs/missing'),
  );
  assert.throws(() => exampleInstance({ $ref: 'https://elsewhere.example/schema.json' }), SchemaInstanceError);
});

test('exampleInstance gives up with SchemaInstanceError when backtracking would explode', () => {
  const branch = {
    type: 'object',
    required: ['a', 'b', 'c'],
    properties: { a: { $ref: '#/$defs/n' }, b: { $ref: '#/$defs/n' }, c: { $ref: '#/$defs/n' } },
  };
  const explosive = { $defs: { n: { anyOf: Array.from({ length: 8 }, () => branch) } }, $ref: '#/$defs/n' };
  assert.throws(
    () => exampleInstance(explosive),
    (error: unknown) => error instanceof SchemaInstanceError && /gave up/.test(error.message),
  );
});

test('exampleInstance throws SchemaInstanceError for recursion with no finite instance', () => {
  const endless = {
    $defs: { loop: { type: 'object', properties: { next: { $ref: '#/$defs/loop' } }, required: ['next'] } },
    $ref: '#/$defs/loop',
  };
  assert.throws(() => exampleInstance(endless), SchemaInstanceError);
});

const violationCases: ReadonlyArray<{ name: string; schema: JsonSchema }> = [
  {
    name: 'a required property',
    schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
  {
    name: 'additionalProperties false',
    schema: { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false },
  },
  { name: 'a typed optional property', schema: { type: 'object', properties: { limit: { type: 'integer' } } } },
  { name: 'an enum property', schema: { type: 'object', properties: { unit: { enum: ['c', 'f'] } } } },
  { name: 'a typed additionalProperties', schema: { type: 'object', additionalProperties: { type: 'string' } } },
  { name: 'a recursive $ref root', schema: treeNode },
  { name: 'a root that admits no object', schema: { oneOf: [{ type: 'integer' }, { type: 'string' }] } },
  {
    name: 'an allOf root',
    schema: { allOf: [{ type: 'object' }, { required: ['id'], properties: { id: { type: 'string' } } }] },
  },
];

for (const { name, schema } of violationCases) {
  test(`violatingObject fails a schema with ${name}`, () => {
    const violation = violatingObject(schema);
    assert.equal(typeof violation, 'object');
    assertInvalid(schema, violation);
    assert.deepEqual(violatingObject(schema), violation);
  });
}

test('violatingObject drops the first required property and keeps the rest', () => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'integer' } },
    required: ['a', 'b'],
  };
  assert.deepEqual(violatingObject(schema), { b: 1 });
});

test('violatingObject adds an unexpected property when only additionalProperties false constrains', () => {
  const schema = { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false };
  assert.deepEqual(violatingObject(schema), { unexpected_property: 'unexpected' });
});

test('violatingObject gives a wrongly typed value when only property types constrain', () => {
  assert.deepEqual(violatingObject({ type: 'object', properties: { limit: { type: 'integer' } } }), {
    limit: 'wrong type',
  });
  assert.deepEqual(violatingObject({ type: 'object', properties: { note: { type: ['string', 'null'] } } }), {
    note: 12345,
  });
});

test('violatingObject returns undefined when every object is accepted', () => {
  assert.equal(violatingObject({ type: 'object' }), undefined);
  assert.equal(violatingObject({}), undefined);
  assert.equal(violatingObject(true), undefined);
  assert.equal(violatingObject({ type: 'object', properties: { anything: {} } }), undefined);
});
