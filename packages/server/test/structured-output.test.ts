/**
 * The grammar a structured target is generated under, and the check after: a schema without
 * strict is compiled leniently (issue 35), held to every keyword the grammar expresses and wider
 * than the schema only where it is not, so that it never forbids a valid answer; it is then not
 * "exact", and its output is held and checked (call/output-check.ts).
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { getLlama, type Llama } from 'node-llama-cpp';
import { llamaRuntime } from '../src/backends/llama-cpp/llama-runtime.js';
import { ServiceError } from '@model-messages/protocol';
import {
  assertStrictSchemaCompiles,
  grammarFor,
  type StructuredTarget,
} from '../src/backends/llama-cpp/structured-output.js';
import { grammarAccepts } from './grammar-admission.js';

const format = (schema: Record<string, unknown>): StructuredTarget => ({
  schema,
  strict: false,
  kind: 'format',
  where: 'output_config.format.schema',
});

let llama: Llama;
before(async () => {
  llama = await llamaRuntime('none');
});

test('a format schema the compiler expresses is its own grammar, exact', async () => {
  const guide = await grammarFor(
    llama,
    format({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false }),
  );
  assert.equal(guide.exact, true);
  assert.ok(grammarAccepts(guide.grammar, '{"n":1}'));
  assert.ok(!grammarAccepts(guide.grammar, '{}'));
});

test('a format schema with a keyword the compiler cannot express keeps the rest: an array schema is not answered {}', async () => {
  const guide = await grammarFor(llama, format({ type: 'array', items: { type: 'integer' }, uniqueItems: true }));
  assert.equal(guide.exact, false);
  assert.ok(grammarAccepts(guide.grammar, '[1,2]'));
  assert.ok(grammarAccepts(guide.grammar, '[1,1]'), 'wider than the schema: Ajv judges uniqueItems');
  assert.ok(!grammarAccepts(guide.grammar, '{}'));
});

test('a format schema without type widens to any JSON value; a tool input keeps its object and widens one property', async () => {
  const untyped = await grammarFor(llama, format({ minimum: 3.5 }));
  assert.equal(untyped.exact, false);
  for (const text of ['5', '"x"', '{}', '[1]', 'null']) assert.ok(grammarAccepts(untyped.grammar, text), text);
  const input = await grammarFor(llama, {
    schema: {
      type: 'object',
      properties: { n: { type: 'integer', multipleOf: 3 }, tag: { type: 'string', enum: ['a', 'b'] } },
      required: ['tag'],
    },
    strict: false,
    kind: 'tool-input',
    where: 'tools.0.input_schema',
  });
  assert.equal(input.exact, false);
  assert.ok(grammarAccepts(input.grammar, '{"n":1,"tag":"a"}'), 'wider than the schema: Ajv judges multipleOf');
  assert.ok(!grammarAccepts(input.grammar, '{"n":1}'), 'still held to required');
  assert.ok(!grammarAccepts(input.grammar, '{"tag":"c"}'), 'still held to the enum');
  assert.ok(!grammarAccepts(input.grammar, '[1]'));
});

test("a tool input whose keywords the compiler all expresses is exact: Claude Code's bounded integers", async () => {
  const input = await grammarFor(llama, {
    schema: {
      type: 'object',
      properties: { offset: { type: 'integer', minimum: 0 }, limit: { type: 'integer', exclusiveMinimum: 0 } },
      required: ['offset'],
      additionalProperties: false,
    },
    strict: false,
    kind: 'tool-input',
    where: 'tools.0.input_schema',
  });
  assert.equal(input.exact, true);
  assert.ok(grammarAccepts(input.grammar, '{"offset":0,"limit":20}'));
  assert.ok(!grammarAccepts(input.grammar, '{"offset":-1}'));
  assert.ok(!grammarAccepts(input.grammar, '{"offset":3,"limit":0}'));
});

test('a strict schema that cannot compile is a 400 naming its path in the request', () => {
  const target: StructuredTarget = {
    schema: {
      type: 'object',
      properties: { a: { type: 'object', properties: { b: { type: 'integer' } }, anyOf: [{ const: { b: 1 } }] } },
    },
    strict: true,
    kind: 'tool-input',
    where: 'tools.2.input_schema',
  };
  assert.throws(
    () => assertStrictSchemaCompiles(target),
    (error: unknown) =>
      error instanceof ServiceError &&
      error.status === 400 &&
      error.message.startsWith('tools.2.input_schema.properties.a.anyOf.0.properties: unsupported "properties"'),
  );
});

test("a schema's grammar text is kept, but a strict schema's failure is each request's own", async () => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'object', properties: { b: { type: 'integer' } }, anyOf: [{ const: { b: 1 } }] } },
  };
  // Without strict it is compiled leniently (and that text kept)...
  const lenient = await grammarFor(llama, { schema, strict: false, kind: 'tool-input', where: 'tools.0.input_schema' });
  assert.equal(lenient.exact, false);
  assert.ok(grammarAccepts(lenient.grammar, '{"a":{"b":1}}'));
  // ...which a strict request of the same schema must not be given: it is refused, and each time
  // with the field of the request at hand, not the first one's.
  for (const where of ['tools.0.input_schema', 'tools.5.input_schema'])
    assert.throws(
      () => assertStrictSchemaCompiles({ schema, strict: true, kind: 'tool-input', where }),
      (error: unknown) => error instanceof ServiceError && error.message.startsWith(`${where}.properties.a.anyOf.0`),
    );
});

test('grammars are kept per runtime: a second runtime (another gpu setting) compiles its own', async () => {
  // node-llama-cpp refuses to generate with a grammar of another runtime ("The given LlamaModel
  // and LlamaGrammar must be from the same Llama instance"): one cache for the process answered
  // a model of the second runtime with the first one's grammar, a 500.
  const other = await getLlama({ gpu: false, build: 'never', progressLogs: false });
  const target = format({ type: 'object', properties: { n: { type: 'integer', minimum: 5 } }, required: ['n'] });
  const first = await grammarFor(llama, target);
  assert.equal((await grammarFor(llama, target)).grammar, first.grammar, 'kept for the same runtime');
  const second = await grammarFor(other, target);
  assert.notEqual(second.grammar, first.grammar);
  assert.equal((await grammarFor(other, target)).grammar, second.grammar);
});
