import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Llama, LlamaGrammar } from 'node-llama-cpp';
import { llamaRuntime } from '../src/backends/llama-cpp/llama-runtime.js';
import { claudeCodeRequests } from '@model-messages/testing';
import { GrammarCompileError, jsonSchemaToGbnf, lenientSchemaToGbnf } from '../src/grammar/json-schema-to-gbnf.js';
import {
  grammarAccepts,
  integer,
  schemaAccepts,
  string,
  type GrammarCase,
  type JsonSchema,
} from './grammar-admission.js';

// Texts are checked by llama.cpp itself (grammar-admission.ts), the same engine that samples.
// Ajv checks the test's own claims: every "valid" text is schema-valid, every "invalid" one is not.

const mixedEnum = ['a"b\\c', 'ünï✓😀', 1, 2.5, true, null, { k: [1, 'x'] }, [1, 'x'], '', 'tab\there'];
const closed = (properties: object, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
const anyValid = [
  'null',
  'true',
  '-1.5e-7',
  '"s"',
  '[]',
  '[1,[2,[3,{"a":{}}]]]',
  '{"k":{"k":[null]}}',
  '{ "a" : [ 1 , 2 ] }',
];
const anyInvalid = ['{"a":}', '[1,]', '01', 'NaN', "'s'", '', 'tru', '{"a":1}}'];

const battery: readonly GrammarCase[] = [
  {
    name: 'flat object, all required',
    schema: closed({ name: string, age: integer, score: { type: 'number' }, active: { type: 'boolean' } }, [
      'name',
      'age',
      'score',
      'active',
    ]),
    valid: [
      '{"name":"Ann","age":30,"score":-1.5e3,"active":true}',
      '{ "name": "Bo", "age": -4, "score": 0.25, "active": false }',
      '{\n"name":"","age":0,"score":7,"active":true\n}',
    ],
    invalid: [
      '{"name":"Ann","age":30,"active":true}',
      '{"name":"Ann","age":30,"score":1,"active":true,"extra":1}',
      '{"name":"Ann","age":1.5,"score":1,"active":true}',
      '{"name":"Ann","age":"30","score":1,"active":true}',
      '{"name":"A\u0001n","age":3,"score":1,"active":true}',
      '{"name":"Ann","age":30,"score":1,"active":true,}',
      '{"name":"Ann","age":30,"score":1,"active":"yes"}',
    ],
    narrowed: [
      '{"name":"Ann","age":1e5,"score":1,"active":true}',
      '{"age":30,"name":"Ann","score":1,"active":true}',
      '{"name":   "Ann","age":30,"score":1,"active":true}',
      '{"name":"Ann","age":1234567890123456,"score":1,"active":true}',
    ],
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
    valid: [
      '{"user":{"name":"a","address":{"city":"b","zip":"1"}}}',
      '{ "user": { "name": "a", "address": { "city": "b", "zip": "1" } } }',
    ],
    invalid: [
      '{"user":{"name":"a","address":{"city":"b"}}}',
      '{"user":{"name":"a","address":{"city":"b","zip":1}}}',
      '{"user":{"name":"a"}}',
      '{}',
    ],
  },
  {
    name: 'required and optional properties interleaved',
    schema: closed({ a: integer, b: string, c: { type: 'boolean' }, d: { type: 'null' } }, ['a', 'c']),
    valid: [
      '{"a":1,"c":true}',
      '{"a":1,"b":"x","c":true}',
      '{"a":1,"c":false,"d":null}',
      '{"a":1,"b":"","c":true,"d":null}',
    ],
    invalid: [
      '{"b":"x","c":true}',
      '{"a":1,"b":"x"}',
      '{"a":1,"c":true,"e":1}',
      '{"a":1,,"c":true}',
      '{"a":1,"c":true,}',
      '{"a":1 "c":true}',
    ],
    narrowed: ['{"c":true,"a":1}'],
  },
  {
    name: 'all-optional object',
    schema: closed({ x: integer, y: string, z: { type: 'array', items: integer } }, []),
    valid: [
      '{}',
      '{ }',
      '{"x":1}',
      '{"y":"s"}',
      '{"z":[]}',
      '{"x":1,"z":[1,2]}',
      '{"y":"s","z":[3]}',
      '{"x":1,"y":"s","z":[]}',
    ],
    invalid: ['{,}', '{"x":1,}', '{,"y":"s"}', '{"w":1}', '{"x":"1"}', '[]', 'null'],
    narrowed: ['{"y":"s","x":1}', '{"x":1,"x":2}'],
  },
  {
    name: 'anyOf with null, object and string branches',
    schema: { anyOf: [{ type: 'null' }, closed({ x: integer }, ['x']), string] },
    valid: ['null', '{"x":5}', '"s"'],
    invalid: ['{}', '{"x":"5"}', '5', 'true', '[null]', '{"x":5,"y":1}'],
  },
  {
    name: 'anyOf with scalar and array branches',
    schema: { anyOf: [integer, { type: 'boolean' }, { type: 'array', items: string }] },
    valid: ['3', 'true', '["a"]', '[]'],
    invalid: ['1.5', '"3"', '[1]', 'null'],
    narrowed: ['1e2'],
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
    valid: [
      '{"name":"r","children":[]}',
      '{"name":"r","children":[{"name":"a","children":[{"name":"b","children":[]}]},{"name":"c","children":[]}]}',
    ],
    invalid: [
      '{"name":"r"}',
      '{"name":"r","children":[{"name":"a"}]}',
      '{"name":"r","children":[{}]}',
      '{"name":"r","children":[1]}',
    ],
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
    valid: ['{"value":1,"next":null}', '{"value":1,"next":{"value":2,"next":{"value":3,"next":null}}}'],
    invalid: [
      '{"value":1}',
      '{"value":1,"next":{"value":2}}',
      '{"value":1.5,"next":null}',
      '{"value":1,"next":{"value":2,"next":false}}',
    ],
  },
  {
    name: 'recursion via #',
    schema: closed({ name: string, children: { type: 'array', items: { $ref: '#' } } }, ['name']),
    valid: ['{"name":"a"}', '{"name":"a","children":[{"name":"b"},{"name":"c","children":[]}]}'],
    invalid: ['{"children":[]}', '{"name":"a","children":[{"children":[]}]}', '{"name":"a","children":{"name":"b"}}'],
  },
  {
    name: 'enum of mixed JSON values',
    schema: { enum: mixedEnum },
    valid: mixedEnum.map((value) => JSON.stringify(value)),
    invalid: ['"a"', String.raw`"a\"b"`, '3', 'false', '{"k":[1]}', '[1]', '"tab\there"', '"ünï"'],
    narrowed: ['{"k": [1, "x"]}', String.raw`"\u00fcn\u00ef✓😀"`, '1.0', '2.50'],
  },
  {
    name: 'typed enum keeps only values of the type',
    schema: { type: 'string', enum: ['on', 'off', 1, null] },
    valid: ['"on"', '"off"'],
    invalid: ['1', 'null', '"of"'],
  },
  {
    name: 'const discriminated union',
    schema: {
      anyOf: [
        closed({ kind: { const: 'circle' }, r: { type: 'number' } }, ['kind', 'r']),
        closed({ kind: { const: 'square' }, side: { type: 'number' } }, ['kind', 'side']),
      ],
    },
    valid: ['{"kind":"circle","r":1}', '{"kind":"square","side":2.5}'],
    invalid: ['{"kind":"circle","side":1}', '{"kind":"triangle","r":1}', '{"kind":"square","r":1}'],
  },
  {
    name: 'const object',
    schema: { const: { a: [1, null], b: 'x' } },
    valid: ['{"a":[1,null],"b":"x"}'],
    invalid: ['{"a":[1,null]}', '{"a":[1],"b":"x"}', 'null'],
    narrowed: ['{"b":"x","a":[1,null]}', '{"a": [1, null], "b": "x"}'],
  },
  {
    name: 'array of objects',
    schema: { type: 'array', items: closed({ id: integer, tags: { type: 'array', items: string } }, ['id']) },
    valid: ['[]', '[{"id":1}]', '[{"id":1,"tags":[]},{"id":2,"tags":["a","b"]}]', '[ {"id":1} , {"id":2} ]'],
    invalid: ['[{}]', '[{"id":1,"tags":[1]}]', '[{"id":1},]', '{"id":1}', '[{"id":1,"x":2}]'],
  },
  {
    name: "type array ['string', 'null']",
    schema: { type: ['string', 'null'] },
    valid: ['"x"', 'null', '""'],
    invalid: ['1', 'false', '{}', 'nul'],
  },
  {
    name: 'additionalProperties schema',
    schema: { type: 'object', properties: { id: integer }, required: ['id'], additionalProperties: string },
    valid: ['{"id":1}', '{"id":1,"x":"y"}', '{"id":1,"i":"a","idd":"b","":"c"}'],
    invalid: ['{"id":1,"x":2}', '{"id":1,"id":"x"}', '{"x":"y"}', '{"id":"1"}'],
    narrowed: ['{"x":"y","id":1}', String.raw`{"id":1,"a\nb":"z"}`],
  },
  {
    name: 'property names that need escapes, with extras',
    schema: {
      type: 'object',
      properties: { 'quo"te': integer, 'back\\slash': { type: 'boolean' }, ünï: { type: 'null' } },
      required: ['quo"te'],
      additionalProperties: integer,
    },
    valid: [
      String.raw`{"quo\"te":1}`,
      String.raw`{"quo\"te":1,"back\\slash":true,"ünï":null}`,
      String.raw`{"quo\"te":1,"other":2}`,
      String.raw`{"quo\"te":1,"ün":3,"ünïx":4}`,
    ],
    invalid: [String.raw`{"quo\"te":1,"ünï":3}`, String.raw`{"quo\"te":"1"}`, '{}'],
    narrowed: [String.raw`{"quo\"te":1,"a\"b":2}`],
  },
  {
    name: 'required name not in properties',
    schema: {
      type: 'object',
      properties: { a: string },
      required: ['a', 'b'],
      additionalProperties: { type: 'boolean' },
    },
    valid: ['{"a":"x","b":true}', '{"a":"x","b":false,"c":true}'],
    invalid: ['{"a":"x"}', '{"a":"x","b":1}'],
    narrowed: ['{"a":"x","c":true,"b":true}'],
  },
  {
    name: 'free-form object',
    schema: { type: 'object' },
    valid: ['{}', '{"a":[1,{"b":null}],"c":"d"}', String.raw`{"\u00e9":1}`],
    invalid: ['[]', '"x"', '{"a"}', '{"a":1,}'],
  },
  {
    name: 'absent additionalProperties means no extra keys',
    schema: { type: 'object', properties: { a: string } },
    valid: ['{}', '{"a":"x"}'],
    invalid: ['{"a":1}'],
    narrowed: ['{"b":1}', '{"a":"x","b":1}'],
  },
  {
    name: 'untyped schema with object keywords also accepts other types',
    schema: { properties: { a: integer }, required: ['a'] },
    valid: ['{"a":1}', '"str"', '5', 'null', '[1]', 'true'],
    invalid: ['{}', '{"a":"x"}'],
    narrowed: ['{"a":1,"b":2}'],
  },
  { name: 'empty schema: any JSON value', schema: {}, valid: anyValid, invalid: anyInvalid },
  { name: 'true schema: any JSON value', schema: true, valid: anyValid, invalid: anyInvalid },
  {
    name: 'number',
    schema: { type: 'number', description: 'ignored', title: 'ignored' },
    valid: ['0', '-0', '-0.5', '1e10', '1E-3', '12.5e+2', '123456789012345.5'],
    invalid: ['01', '.5', '1.', '+1', '1e', 'NaN', '"1"', '- 1'],
    // 9e999 is valid JSON but parses to Infinity, which JSON.stringify writes as null.
    narrowed: ['1234567890123456', '0.1234567890123456', '9e999', '1e100'],
  },
  {
    name: 'integer',
    schema: integer,
    valid: ['0', '-7', '123456789012345'],
    invalid: ['1.5', '-', '01', '"1"', '1.', '-0.5'],
    narrowed: ['1e5', '1.0', '1234567890123456'],
  },
  {
    name: 'string escapes',
    schema: string,
    valid: [String.raw`"a\"b\\c\/\b\f\n\r\t\u00e9 ü 😀"`, '""', '"\u007f"', String.raw`"\uD83D\uDE00"`],
    invalid: ['"a\u0001"', '"a\nb"', String.raw`"\x41"`, String.raw`"\u12"`, '"abc', "'abc'", '"a"b"'],
  },
  {
    name: 'minItems and maxItems',
    schema: { type: 'array', items: integer, minItems: 1, maxItems: 3 },
    valid: ['[1]', '[1,2,3]', '[ 1 , 2 ]'],
    invalid: ['[]', '[1,2,3,4]', '[1,]', '["1"]'],
  },
  { name: 'items false', schema: { type: 'array', items: false }, valid: ['[]', '[ ]'], invalid: ['[1]', '[null]'] },
  {
    name: 'a false property is no extra key either',
    schema: { type: 'object', properties: { a: string, secret: false }, additionalProperties: integer },
    valid: ['{}', '{"a":"x"}', '{"a":"x","b":1}', '{"secrets":1}', '{"secre":1}'],
    invalid: ['{"secret":1}', '{"a":"x","secret":1}', '{"b":"x"}'],
  },
  {
    name: 'a false property beside free extras',
    schema: { type: 'object', properties: { secret: false }, additionalProperties: true },
    valid: ['{}', '{"b":[1]}'],
    invalid: ['{"secret":1}', '{"b":1,"secret":null}'],
  },
  {
    name: '$ref pointers with ~0, ~1 and %-escapes',
    schema: {
      type: 'object',
      properties: { n: { $ref: '#/$defs/a~1b~0c' }, f: { $ref: '#/$defs/sp%20ace' } },
      required: ['n', 'f'],
      additionalProperties: false,
      $defs: { 'a/b~c': integer, 'sp ace': { type: 'boolean' } },
    },
    valid: ['{"n":1,"f":true}'],
    invalid: ['{"n":true,"f":1}', '{"n":1}'],
  },
  {
    name: 'string lengths (issue 35)',
    schema: closed({ code: { type: 'string', minLength: 2, maxLength: 4 } }, ['code']),
    valid: ['{"code":"ab"}', '{"code":"abcd"}', '{"code":"a\\nb"}', '{"code":"ü✓"}'],
    invalid: ['{"code":"a"}', '{"code":"abcde"}', '{"code":""}', '{"code":2}'],
  },
  {
    name: "an anchored pattern: Claude Code's Workflow run id",
    schema: { type: 'string', pattern: '^wf_[a-z0-9-]{6,}$' },
    valid: ['"wf_abc-12"', '"wf_abcdefgh"', '"wf_------"'],
    invalid: ['"wf_abc"', '"xwf_abcdef"', '"wf_ABCDEF"', '"wf_abcdef "', '12'],
  },
  {
    name: 'an unanchored pattern with alternation, groups and classes',
    schema: { type: 'string', pattern: '(o\\.b|x[0-9]{2}(?:y|z)?)' },
    valid: ['"o.b"', '"foo.bar"', '"x12"', '"ax12z"', '"\\"x99"'],
    invalid: ['"oxb"', '"foo"', '"x1"', '""'],
  },
  {
    name: 'a pattern of characters JSON escapes',
    schema: { type: 'string', pattern: '^a"b\\\\c\\n[\\t ]$' },
    valid: ['"a\\"b\\\\c\\n\\t"', '"a\\"b\\\\c\\n "'],
    invalid: ['"a\\"b\\\\c\\n"', '"ab\\\\c\\n "'],
  },
  {
    name: 'integer bounds (issue 35)',
    schema: { type: 'integer', minimum: -5, exclusiveMaximum: 120 },
    valid: ['-5', '0', '7', '119', '-1'],
    invalid: ['-6', '120', '1000', '1.5', '"3"'],
    narrowed: ['-0'],
  },
  {
    name: "Claude Code's Read: a bound of 2^53 - 1 is met by every integer the grammar writes",
    schema: closed(
      {
        file_path: string,
        offset: { type: 'integer', minimum: 0, maximum: 9007199254740991 },
        limit: { type: 'integer', exclusiveMinimum: 0, maximum: 9007199254740991 },
      },
      ['file_path'],
    ),
    valid: ['{"file_path":"a"}', '{"file_path":"a","offset":0,"limit":1}', '{"file_path":"a","limit":999999999999999}'],
    invalid: ['{"file_path":"a","limit":0}', '{"file_path":"a","offset":-3}', '{"offset":1}'],
    narrowed: ['{"file_path":"a","offset":9007199254740991}'],
  },
];

let llama: Llama;
const grammars = new Map<string, LlamaGrammar>();

/** Milliseconds to compile the whole battery once. */
function batteryCompileTime(): number {
  const started = performance.now();
  for (const grammarCase of battery) jsonSchemaToGbnf(grammarCase.schema);
  return performance.now() - started;
}

before(async () => {
  llama = await llamaRuntime('none');
  const coldMilliseconds = batteryCompileTime();
  const warmRuns = Array.from({ length: 20 }, batteryCompileTime);
  const texts = battery.map((grammarCase) => jsonSchemaToGbnf(grammarCase.schema));
  const parseStarted = performance.now();
  for (const [index, grammarCase] of battery.entries()) {
    grammars.set(grammarCase.name, await llama.createGrammar({ grammar: texts[index] as string }));
  }
  const parseMilliseconds = performance.now() - parseStarted;
  const rules = texts.reduce((total, text) => total + text.trim().split('\n').length, 0);
  const warmMean = warmRuns.reduce((total, run) => total + run, 0) / warmRuns.length;
  console.log(
    `grammar battery: ${battery.length} schemas, ${rules} GBNF rules; compile ${coldMilliseconds.toFixed(1)} ms cold, ` +
      `${warmMean.toFixed(2)} ms warm (mean of ${warmRuns.length}); llama.cpp parse ${parseMilliseconds.toFixed(1)} ms`,
  );
});

test('the battery has at least 20 schemas and every grammar parses in llama.cpp', () => {
  assert.ok(battery.length >= 20);
  assert.equal(grammars.size, battery.length);
});

for (const grammarCase of battery) {
  test(`grammar accepts exactly the valid texts: ${grammarCase.name}`, () => {
    const grammar = grammars.get(grammarCase.name) as LlamaGrammar;
    for (const text of grammarCase.valid) {
      assert.ok(schemaAccepts(grammarCase.schema, text), `test claim: ${JSON.stringify(text)} is schema-valid`);
      assert.ok(grammarAccepts(grammar, text), `grammar should accept ${JSON.stringify(text)}`);
    }
    for (const text of grammarCase.invalid) {
      assert.ok(!schemaAccepts(grammarCase.schema, text), `test claim: ${JSON.stringify(text)} is invalid`);
      assert.ok(!grammarAccepts(grammar, text), `grammar should reject ${JSON.stringify(text)}`);
    }
    for (const text of grammarCase.narrowed ?? []) {
      assert.ok(schemaAccepts(grammarCase.schema, text), `test claim: ${JSON.stringify(text)} is schema-valid`);
      assert.ok(!grammarAccepts(grammar, text), `grammar should reject (by design) ${JSON.stringify(text)}`);
    }
  });
}

const unsupported: readonly [JsonSchema, string, string][] = [
  [
    { type: 'object', properties: { name: { type: 'string', pattern: '(?=a)' } } },
    'pattern',
    '#/properties/name/pattern',
  ],
  [{ type: 'string', pattern: '^a', maxLength: 3 }, 'maxLength', '#/maxLength'],
  [{ type: 'string', minLength: 1000 }, 'minLength', '#/minLength'],
  [{ type: 'number', minimum: 0.5 }, 'minimum', '#/minimum'],
  [{ type: 'integer', minimum: 3, maximum: 2 }, 'no integer', '#'],
  [{ type: 'array', items: { type: 'string', format: 'date' } }, 'format', '#/items/format'],
  [{ oneOf: [string, integer] }, 'oneOf', '#/oneOf'],
  [{ $defs: { a: { allOf: [string] } }, $ref: '#/$defs/a' }, 'allOf', '#/$defs/a/allOf'],
  [{ type: 'object', properties: { 'x/y': { not: string } } }, 'not', '#/properties/x~1y/not'],
  [{ type: 'array', prefixItems: [string] }, 'prefixItems', '#/prefixItems'],
  [{ type: 'array', items: [string] }, 'items', '#/items'],
  [{ type: 'array', items: string, maxItems: 1000 }, 'maxItems', '#/maxItems'],
  [{ $ref: 'other.json#/a' }, '$ref', '#/$ref'],
  [{ $ref: '#/$defs/missing' }, '$ref', '#/$ref'],
  [{ $ref: '#/$defs/a', type: 'object', $defs: { a: string } }, 'no value', '#'],
  [{ type: 'object', properties: { a: integer }, anyOf: [{ const: { a: 1 } }] }, 'properties', '#/anyOf/0/properties'],
  [{ anyOf: [{ $ref: '#' }, { type: 'null' }] }, '$ref', '#'],
  [{ type: 'object', properties: { a: false }, required: ['a'] }, 'a', '#/properties/a'],
  [{ type: 'integer', enum: ['x'] }, 'enum', '#'],
];

test('unsupported or unsatisfiable constructs throw GrammarCompileError naming the construct and path', () => {
  for (const [schema, construct, path] of unsupported) {
    assert.throws(
      () => jsonSchemaToGbnf(schema),
      (error: unknown) => {
        assert.ok(error instanceof GrammarCompileError, `expected GrammarCompileError for ${JSON.stringify(schema)}`);
        assert.ok(error.message.includes(construct), `message "${error.message}" should name ${construct}`);
        assert.ok(error.message.endsWith(` at ${path}`), `message "${error.message}" should end with the path ${path}`);
        assert.equal(error.path, path);
        return true;
      },
    );
  }
});

test('rule names are GBNF identifiers, root comes first, identical sub-schemas share one rule', () => {
  const point = closed({ x: integer, y: integer }, ['x', 'y']);
  const grammar = jsonSchemaToGbnf({
    type: 'object',
    properties: { from: point, to: point, 'na me!': string },
    required: ['from'],
  });
  const lines = grammar.trim().split('\n');
  assert.match(lines[0] as string, /^root ::= /);
  for (const line of lines) assert.match(line, /^[A-Za-z][A-Za-z0-9-]* ::= \S/);
  assert.equal(lines.filter((line) => line.includes('"\\"x\\""')).length, 1, grammar);
});

test('the same schema always gives the same grammar text', () => {
  for (const grammarCase of battery)
    assert.equal(jsonSchemaToGbnf(grammarCase.schema), jsonSchemaToGbnf(grammarCase.schema));
});

describe('lenient compile (issue 35): a schema without strict is held to what the grammar expresses', () => {
  test('a keyword outside the grammar is left out and named; the rest of the schema still holds', async () => {
    const schema = closed({ url: { type: 'string', format: 'uri' }, count: integer, mode: { enum: ['a', 'b'] } }, [
      'url',
      'count',
    ]);
    const { text, widened } = lenientSchemaToGbnf(schema);
    assert.deepEqual(widened, ['#/properties/url/format']);
    const grammar = await llama.createGrammar({ grammar: text });
    assert.ok(grammarAccepts(grammar, '{"url":"not a uri","count":1}'), 'wider than the schema only at format');
    for (const invalid of [
      '{"url":"x"}',
      '{"url":1,"count":1}',
      '{"url":"x","count":1,"mode":"c"}',
      '{"url":"x","count":1,"x":1}',
    ])
      assert.ok(!grammarAccepts(grammar, invalid), invalid);
  });

  test('a subschema that cannot compile widens to its declared types, and only it', async () => {
    const schema = closed({ pick: { type: 'string', enum: ['a', 'bb'], maxLength: 1 }, n: integer }, ['pick', 'n']);
    const { text, widened } = lenientSchemaToGbnf(schema);
    assert.deepEqual(widened, ['#/properties/pick/maxLength']);
    const grammar = await llama.createGrammar({ grammar: text });
    assert.ok(grammarAccepts(grammar, '{"pick":"zzz","n":1}'));
    assert.ok(!grammarAccepts(grammar, '{"pick":1,"n":1}'));
  });

  test('a schema the exact compile takes compiles to the same grammar, with nothing widened', () => {
    for (const grammarCase of battery) {
      const { text, widened } = lenientSchemaToGbnf(grammarCase.schema);
      assert.deepEqual(widened, [], grammarCase.name);
      assert.equal(text, jsonSchemaToGbnf(grammarCase.schema), grammarCase.name);
    }
  });

  test("Claude Code's recorded tool set: every schema exact but one string bound above the length limit", () => {
    const tools = claudeCodeRequests().find((request) => request.name === 'write-request')!.body.tools as Array<{
      name: string;
      input_schema: unknown;
    }>;
    const widened = Object.fromEntries(
      tools.map((tool) => [tool.name, lenientSchemaToGbnf(tool.input_schema).widened]),
    );
    assert.deepEqual(
      Object.entries(widened).filter(([, places]) => places.length > 0),
      [['Workflow', ['#/properties/script/maxLength']]],
    );
  });
});
