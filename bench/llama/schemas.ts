/**
 * Schemas for the engine benchmark: the strict-schema battery of packages/server/test/grammar.test.ts
 * (copied, because importing a test file would run its tests) and one medium schema for timing
 * generation under a grammar.
 */

export type JsonSchema = boolean | { [keyword: string]: unknown };

export interface NamedSchema {
  readonly name: string;
  readonly schema: JsonSchema;
}

const integer = { type: 'integer' };
const string = { type: 'string' };
const mixedEnum = ['a"b\\c', 'ünï✓😀', 1, 2.5, true, null, { k: [1, 'x'] }, [1, 'x'], '', 'tab\there'];
const closed = (properties: object, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
const closedAllRequired = (properties: Record<string, unknown>) => closed(properties, Object.keys(properties));

/** The grammar test battery, schema for schema (the test's valid/invalid texts are left out). */
export const STRICT_SCHEMA_BATTERY: readonly NamedSchema[] = [
  {
    name: 'flat object, all required',
    schema: closed({ name: string, age: integer, score: { type: 'number' }, active: { type: 'boolean' } }, [
      'name',
      'age',
      'score',
      'active',
    ]),
  },
  {
    name: 'nested objects',
    schema: closed(
      {
        user: closed({ name: string, address: closed({ city: string, zip: string }, ['city', 'zip']) }, [
          'name',
          'address',
        ]),
      },
      ['user'],
    ),
  },
  {
    name: 'required and optional properties interleaved',
    schema: closed({ a: integer, b: string, c: { type: 'boolean' }, d: { type: 'null' } }, ['a', 'c']),
  },
  { name: 'all-optional object', schema: closed({ x: integer, y: string, z: { type: 'array', items: integer } }, []) },
  {
    name: 'anyOf with null, object and string branches',
    schema: { anyOf: [{ type: 'null' }, closed({ x: integer }, ['x']), string] },
  },
  {
    name: 'anyOf with scalar and array branches',
    schema: { anyOf: [integer, { type: 'boolean' }, { type: 'array', items: string }] },
  },
  {
    name: 'recursive tree via $defs',
    schema: {
      $ref: '#/$defs/node',
      $defs: {
        node: closed({ name: string, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, [
          'name',
          'children',
        ]),
      },
    },
  },
  {
    name: 'recursive linked list via definitions',
    schema: {
      $ref: '#/definitions/node',
      definitions: {
        node: closed({ value: integer, next: { anyOf: [{ $ref: '#/definitions/node' }, { type: 'null' }] } }, [
          'value',
          'next',
        ]),
      },
    },
  },
  {
    name: 'recursion via #',
    schema: closed({ name: string, children: { type: 'array', items: { $ref: '#' } } }, ['name']),
  },
  { name: 'enum of mixed JSON values', schema: { enum: mixedEnum } },
  { name: 'typed enum keeps only values of the type', schema: { type: 'string', enum: ['on', 'off', 1, null] } },
  {
    name: 'const discriminated union',
    schema: {
      anyOf: [
        closed({ kind: { const: 'circle' }, r: { type: 'number' } }, ['kind', 'r']),
        closed({ kind: { const: 'square' }, side: { type: 'number' } }, ['kind', 'side']),
      ],
    },
  },
  { name: 'const object', schema: { const: { a: [1, null], b: 'x' } } },
  {
    name: 'array of objects',
    schema: { type: 'array', items: closed({ id: integer, tags: { type: 'array', items: string } }, ['id']) },
  },
  { name: "type array ['string', 'null']", schema: { type: ['string', 'null'] } },
  {
    name: 'additionalProperties schema',
    schema: { type: 'object', properties: { id: integer }, required: ['id'], additionalProperties: string },
  },
  {
    name: 'property names that need escapes, with extras',
    schema: {
      type: 'object',
      properties: { 'quo"te': integer, 'back\\slash': { type: 'boolean' }, ünï: { type: 'null' } },
      required: ['quo"te'],
      additionalProperties: integer,
    },
  },
  {
    name: 'required name not in properties',
    schema: {
      type: 'object',
      properties: { a: string },
      required: ['a', 'b'],
      additionalProperties: { type: 'boolean' },
    },
  },
  { name: 'free-form object', schema: { type: 'object' } },
  { name: 'absent additionalProperties means no extra keys', schema: { type: 'object', properties: { a: string } } },
  {
    name: 'untyped schema with object keywords also accepts other types',
    schema: { properties: { a: integer }, required: ['a'] },
  },
  { name: 'empty schema: any JSON value', schema: {} },
  { name: 'true schema: any JSON value', schema: true },
  { name: 'number', schema: { type: 'number', description: 'ignored', title: 'ignored' } },
  { name: 'integer', schema: integer },
  { name: 'string escapes', schema: string },
  { name: 'minItems and maxItems', schema: { type: 'array', items: integer, minItems: 1, maxItems: 3 } },
  { name: 'items false', schema: { type: 'array', items: false } },
  {
    name: '$ref pointers with ~0, ~1 and %-escapes',
    schema: {
      type: 'object',
      properties: { n: { $ref: '#/$defs/a~1b~0c' }, f: { $ref: '#/$defs/sp%20ace' } },
      required: ['n', 'f'],
      additionalProperties: false,
      $defs: { 'a/b~c': integer, 'sp ace': { type: 'boolean' } },
    },
  },
];

/**
 * An order: nested object, an array of objects with a nested array, an enum and a nullable field.
 * minItems 4 makes the shortest valid text (295 characters, 144 tokens of the bench model's
 * vocabulary) longer than the benchmark's token budget, so a constrained generation does not
 * finish early and both sides generate the same number of tokens.
 */
export const MEDIUM_SCHEMA: NamedSchema = {
  name: 'order (nested object, array of 4+ objects with nested arrays, enum, nullable)',
  schema: closedAllRequired({
    order_id: string,
    customer: closedAllRequired({ name: string, email: string, vip: { type: 'boolean' } }),
    items: {
      type: 'array',
      minItems: 4,
      items: closedAllRequired({
        sku: string,
        quantity: integer,
        unit_price: { type: 'number' },
        tags: { type: 'array', items: string },
      }),
    },
    status: { enum: ['pending', 'paid', 'shipped', 'cancelled'] },
    notes: { anyOf: [string, { type: 'null' }] },
  }),
};
