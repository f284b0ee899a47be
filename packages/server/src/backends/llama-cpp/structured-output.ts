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
    if (!(error instanceof GrammarCompileError) || target.strict) throw error;
    return jsonSchemaToGbnf(ANY_OBJECT);
  }
}

/** Parses and validates generated JSON; a strict target that fails is our bug, not the caller's. */
export function checkStructuredOutput(text: string, target: StructuredTarget, truncated: boolean): { value?: Record<string, unknown>; violation?: string } {
  if (truncated) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return failure(target, `the model's output is not JSON (${(error as Error).message})`);
  }
  if (hasNonFiniteNumber(value)) return failure(target, 'a number in the output is outside the double range');
  const violation = schemaViolation(target.schema, value, target.where);
  if (violation) return failure(target, violation);
  return { value: value as Record<string, unknown> };
}

function failure(target: StructuredTarget, violation: string): { violation: string } {
  if (target.strict) throw new ServiceError('internal', `grammar-constrained output failed ${target.where}: ${violation}`);
  return { violation };
}

/** Ajv counts Infinity as a number, but it would reach the client as null. */
function hasNonFiniteNumber(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.values(value).some(hasNonFiniteNumber);
}
