import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ajvFor, COMPILES_PER_INSTANCE } from '../src/schema-dialects.js';
import { compileSchema } from '../src/json-schema-validator.js';

describe("the Ajv instances that compile callers' schemas", () => {
  test("an instance is replaced after its share of compiles, so Ajv's own never-emptied cache stays bounded", () => {
    const schema = { type: 'object', properties: { renewal: { type: 'string' } } };
    const first = ajvFor(schema, 'schema', false);
    let replaced = false;
    for (let count = 1; count <= COMPILES_PER_INSTANCE && !replaced; count += 1)
      replaced = ajvFor(schema, 'schema', false) !== first;
    assert.ok(replaced, `a new instance within ${COMPILES_PER_INSTANCE} compiles`);
  });

  test('a validator keeps working after the instance that compiled it was replaced', () => {
    const validate = compileSchema(
      { type: 'object', properties: { kept: { type: 'integer' } }, required: ['kept'] },
      'schema',
    );
    for (let count = 0; count <= COMPILES_PER_INSTANCE; count += 1)
      compileSchema({ type: 'object', properties: { [`p${count}`]: { type: 'string' } } }, 'schema');
    assert.equal(validate({ kept: 1 }), true);
    assert.equal(validate({ kept: 'one' }), false);
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
