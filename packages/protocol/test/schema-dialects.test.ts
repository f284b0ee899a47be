import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkSchemaDocument,
  compiledValidatorBytes,
  compileSchema,
  GENERATION_BYTES,
} from '../src/json-schema-validator.js';
import { PATTERN_LIMITS } from '../src/pattern-budget.js';

describe("the Ajv instances that compile callers' schemas", () => {
  // About 3.2 MB each, as estimated (16 bytes a character of schema text), and quick to compile.
  const distinct = (index: number) => ({
    enum: Array.from({ length: 10 }, (_, entry) => `${index}:${entry}:${'x'.repeat(20_000)}`),
  });

  test('the validators kept stay within a generation of GENERATION_BYTES per draft, however many schemas come', () => {
    // Other test files of the same process may hold validators already (the runner groups small
    // files): the bound is on what these 96 MB of schemas add, kept without generations.
    const before = compiledValidatorBytes();
    for (let index = 0; index < 30; index += 1) compileSchema(distinct(index), 'schema');
    // The last generation may pass its share by the one compile that filled it.
    const added = compiledValidatorBytes() - before;
    assert.ok(added < GENERATION_BYTES + 4 * 1024 * 1024, String(added));
  });

  test('a validator keeps working after the generation that compiled it was replaced', () => {
    const validate = compileSchema(
      { type: 'object', properties: { kept: { type: 'integer' } }, required: ['kept'] },
      'schema',
    );
    for (let index = 100; index < 130; index += 1) compileSchema(distinct(index), 'schema');
    assert.equal(validate({ kept: 1 }), true);
    assert.equal(validate({ kept: 'one' }), false);
  });

  test('the same schema twice is compiled once', () => {
    const schema = { type: 'object', properties: { once: { type: 'boolean' } } };
    assert.equal(compileSchema(schema, 'schema'), compileSchema(structuredClone(schema), 'schema'));
  });

  test('a $defs entry named by many properties compiles once, not once per use', () => {
    // Inlined, 200 references to a 200-property entry made a validator of 40,000 properties (16 s).
    const properties = (count: number, value: unknown) =>
      Object.fromEntries(Array.from({ length: count }, (_, index) => [`p${index}`, value]));
    const validate = compileSchema(
      {
        type: 'object',
        properties: properties(200, { $ref: '#/$defs/wide' }),
        $defs: { wide: { type: 'object', properties: properties(200, { type: 'string' }) } },
      },
      'schema',
    );
    assert.ok(validate.toString().length < 200_000, `generated code of ${validate.toString().length} characters`);
    assert.equal(validate({ p3: { p7: 'text' } }), true);
    assert.equal(validate({ p3: { p7: 7 } }), false);
  });
});

describe('patterns in compiled schemas', () => {
  const withPatterns = (patterns: string[]) => ({
    type: 'object',
    properties: Object.fromEntries(patterns.map((pattern, index) => [`p${index}`, { type: 'string', pattern }])),
  });

  test('ordinary patterns compile and are checked', () => {
    const validate = compileSchema(withPatterns(Array(200).fill('^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$')), 'schema');
    assert.equal(validate({ p0: 'someone@example.com' }), true);
    assert.equal(validate({ p0: 'someone' }), false);
  });

  test('a pattern that unrolls past the budget is refused before RE2 compiles it, naming it', () => {
    assert.throws(
      () => compileSchema(withPatterns(['^\\pL{1000}$']), 'output_config.format.schema'),
      (error: unknown) =>
        error instanceof Error &&
        error.message.startsWith(
          'output_config.format.schema: not a valid JSON Schema: the pattern "^\\\\pL{1000}$"',
        ) &&
        error.message.includes(`${PATTERN_LIMITS.runes} character-range bounds`),
    );
  });

  test('many patterns are refused once their sum passes the budget, though each alone would pass', () => {
    assert.throws(
      () => compileSchema(withPatterns(Array.from({ length: 60 }, (_, index) => `^a{1000}${index}$`)), 'schema'),
      new RegExp(`past ${PATTERN_LIMITS.instructions} regular-expression instructions`),
    );
    assert.doesNotThrow(() => compileSchema(withPatterns(['^a{1000}$']), 'schema'));
  });
});

describe('schemas only shown to a model', () => {
  test('a well-formed schema passes its meta-schema check without a validator being compiled', () => {
    const before = compiledValidatorBytes();
    checkSchemaDocument(
      {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 1000 }, (_, index) => [
            `p${index}`,
            { type: 'string', pattern: `^(a+)+\\pL{1000}${index}$` },
          ]),
        ),
      },
      'tools.0.input_schema',
    );
    assert.equal(compiledValidatorBytes(), before);
  });

  test('a schema that is not one is refused naming where it fails', () => {
    assert.throws(
      () =>
        checkSchemaDocument({ type: 'object', properties: { x: { type: 'no-such-type' } } }, 'tools.0.input_schema'),
      (error: unknown) =>
        error instanceof Error &&
        /^tools\.0\.input_schema: not a valid JSON Schema: \/properties\/x\/type /.test(error.message),
    );
  });

  test('an unknown draft is refused as for a compiled schema', () => {
    assert.throws(
      () => checkSchemaDocument({ $schema: 'https://example.com/draft-99' }, 'tools.0.input_schema'),
      /tools\.0\.input_schema\.\$schema: "https:\/\/example\.com\/draft-99" is not a supported JSON Schema draft/,
    );
  });
});

describe('references through the root', () => {
  const tree = (extra: Record<string, unknown> = {}) => ({
    ...extra,
    type: 'object',
    properties: { child: { anyOf: [{ $ref: '#' }, { type: 'null' }] } },
    required: ['child'],
  });

  test('"$ref": "#" compiles and recurses in every draft, with or without a root $id', () => {
    for (const extra of [
      {},
      { $schema: 'https://json-schema.org/draft/2019-09/schema' },
      { $schema: 'http://json-schema.org/draft-07/schema#' },
      { $schema: 'http://json-schema.org/draft-06/schema#' },
      { $id: 'https://example.com/tree' },
    ]) {
      const validate = compileSchema(tree(extra), 'schema');
      assert.equal(validate({ child: { child: null } }), true, JSON.stringify(extra));
      assert.equal(validate({ child: { child: 1 } }), false, JSON.stringify(extra));
    }
  });

  test('a reference that names nothing is still refused, naming the reference', () => {
    assert.throws(
      () => compileSchema({ $ref: '#/$defs/missing' }, 'tools.0.input_schema'),
      (error: unknown) =>
        error instanceof Error &&
        error.message ===
          "tools.0.input_schema: not a valid JSON Schema: can't resolve reference #/$defs/missing from id #",
    );
  });
});
