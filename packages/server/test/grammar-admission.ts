/**
 * Whether a JSON text is admitted, asked of both judges the grammar tests compare: Ajv (the
 * schema's own verdict) and llama.cpp (the compiled grammar's). LlamaGrammar's internal
 * `_testText` runs the addon's `isTextCompatible`, which feeds the text's code points through
 * llama_grammar_accept and reports whether a stack completed: no model is needed, and it is the
 * same engine that samples.
 */
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { LlamaGrammar } from 'node-llama-cpp';

export type JsonSchema = boolean | { [keyword: string]: unknown };

/** One schema and texts the grammar compiled from it must admit, refuse, or narrow away. */
export interface GrammarCase {
  readonly name: string;
  readonly schema: JsonSchema;
  /** Schema-valid JSON texts the grammar must accept. */
  readonly valid: readonly string[];
  /** Texts that are not JSON, or not valid against the schema: the grammar must reject them. */
  readonly invalid: readonly string[];
  /** Schema-valid texts rejected by design: key order, digit/whitespace caps, compact enum literals, escaped extra keys. */
  readonly narrowed?: readonly string[];
}

export const integer = { type: 'integer' };
export const string = { type: 'string' };

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

/** True when `text` is JSON and valid against `schema` according to Ajv. */
export function schemaAccepts(schema: JsonSchema, text: string): boolean {
  let instance: unknown;
  try {
    instance = JSON.parse(text);
  } catch {
    return false;
  }
  return ajv.validate(schema, instance);
}

/** llama.cpp's own full-match check; `_testText` is internal, so its presence is asserted. */
export function grammarAccepts(grammar: LlamaGrammar, text: string): boolean {
  const internal = grammar as unknown as { _testText?: (text: string) => boolean };
  assert.equal(typeof internal._testText, 'function', 'node-llama-cpp no longer exposes LlamaGrammar._testText');
  return internal._testText?.call(grammar, text) === true;
}
