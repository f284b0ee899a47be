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
