/**
 * Output that must match a JSON Schema (a forced tool's input, `output_config.format`): the
 * grammar compiled from the schema constrains generation, and Ajv re-validates the result.
 * Strict schemas always compile (the grammar covers the whole strict keyword set); a non-strict
 * schema with keywords the grammar cannot express is generated as any JSON object and checked
 * afterwards, so the caller learns of a mismatch instead of receiving it silently.
 */
import type { Llama, LlamaGrammar } from 'node-llama-cpp';
import { schemaViolation, ServiceError } from '@mms/protocol';
import { GrammarCompileError, jsonSchemaToGbnf } from '../../grammar/json-schema-to-gbnf.js';

export interface StructuredTarget {
  schema: Record<string, unknown>;
  strict: boolean;
  /** For messages: `tools.0.input_schema` or `output_config.format.schema`. */
  where: string;
}

const ANY_OBJECT = { type: 'object', additionalProperties: true };
const grammars = new Map<string, Promise<LlamaGrammar>>();
const GRAMMAR_CACHE_LIMIT = 256;

export function grammarFor(llama: Llama, target: StructuredTarget): Promise<LlamaGrammar> {
  const text = gbnfFor(target);
  let grammar = grammars.get(text);
  if (!grammar) {
    grammar = llama.createGrammar({ grammar: text });
    if (grammars.size >= GRAMMAR_CACHE_LIMIT) grammars.delete(grammars.keys().next().value!);
    grammars.set(text, grammar);
  }
  return grammar;
}

function gbnfFor(target: StructuredTarget): string {
  try {
    return jsonSchemaToGbnf(target.schema);
  } catch (error) {
    if (!(error instanceof GrammarCompileError)) throw error;
    if (target.strict) throw uncompiledStrictSchema(target, error);
    return jsonSchemaToGbnf(ANY_OBJECT);
  }
}

/**
 * Refuses, before anything is generated, a strict schema the grammar cannot hold output to: the
 * keyword list allows it, but this engine would have to pass on output it cannot guarantee.
 */
export function assertStrictSchemaCompiles(target: StructuredTarget): void {
  gbnfFor(target);
}

/** The caller's schema, not the service, is what must change: a 400 naming the place in the request. */
function uncompiledStrictSchema(target: StructuredTarget, error: GrammarCompileError): ServiceError {
  const segments = error.path.split('/').slice(1).map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  const where = [target.where, ...segments].join('.');
  return new ServiceError('invalid_request', `${where}: ${error.reason}; the llama-cpp backend cannot hold output to this strict schema (drop strict, or write the constraint into a description)`);
}

/**
 * The parsed output of a strict target, checked once more against its schema: a strict target
 * that fails is our bug (grammar or compiler), never a valid answer. A non-strict target whose
 * keywords the grammar could not express is passed on as generated.
 */
export function assertStrictOutput(text: string, target: StructuredTarget): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw strictFailure(target, `the model's output is not JSON (${(error as Error).message})`);
  }
  if (hasNonFiniteNumber(value)) throw strictFailure(target, 'a number in the output is outside the double range');
  const violation = schemaViolation(target.schema, value, target.where);
  if (violation) throw strictFailure(target, violation);
  return value as Record<string, unknown>;
}

function strictFailure(target: StructuredTarget, violation: string): ServiceError {
  return new ServiceError('model_output_invalid', `grammar-constrained output failed ${target.where}: ${violation}`);
}

/** Ajv counts Infinity as a number, but it would reach the client as null. */
function hasNonFiniteNumber(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.values(value).some(hasNonFiniteNumber);
}
