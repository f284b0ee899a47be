/**
 * Output that must match a JSON Schema (a tool's input, `output_config.format`): the grammar
 * compiled from the schema constrains generation, and Ajv re-validates the result. Strict
 * schemas must compile exactly (a 400 names what does not). A non-strict schema is compiled
 * leniently (issue 35, grammar/compile-mode.ts): the grammar holds every keyword it can express
 * and leaves out the rest, so it is exact when nothing was left out and otherwise wider than the
 * schema, its output checked afterwards, so the caller learns of a mismatch instead of receiving
 * it silently. Where even that fails (a grammar past llama.cpp's parser limits), the output is
 * generated under a grammar for its shape only: any JSON object for a tool's input, any value of
 * the schema's declared types for a format answer (any JSON value when it declares none).
 */
import type { Llama, LlamaGrammar } from 'node-llama-cpp';
import { ServiceError } from '@model-messages/protocol';
import { GrammarCompileError, jsonSchemaToGbnf, lenientSchemaToGbnf } from '../../grammar/json-schema-to-gbnf.js';
import { schemaFieldPath } from '../../json-schema/json-pointer.js';
import { GbnfCache, GrammarCache, type GbnfText } from './grammar-cache.js';

export interface StructuredTarget {
  schema: Record<string, unknown>;
  strict: boolean;
  /** What the output is: a tool's input must be an object whatever its schema says; a format answer may be any JSON value. */
  kind: 'tool-input' | 'format';
  /** For messages: `tools.0.input_schema` or `output_config.format.schema`. */
  where: string;
}

/** A grammar for a target, and whether it is the schema's own (so its output is valid by construction). */
export interface Guide {
  grammar: LlamaGrammar;
  exact: boolean;
}

/**
 * Compiled grammars per runtime: a grammar works only with models of the runtime that compiled it
 * (node-llama-cpp refuses the pair otherwise), and models configured with different `gpu`
 * settings run on different runtimes in one process.
 */
const grammarsByRuntime = new WeakMap<Llama, GrammarCache>();

export async function grammarFor(llama: Llama, target: StructuredTarget): Promise<Guide> {
  const { text, exact } = gbnfFor(target);
  let grammars = grammarsByRuntime.get(llama);
  if (!grammars) grammarsByRuntime.set(llama, (grammars = new GrammarCache()));
  let grammar = grammars.get(text);
  if (!grammar) {
    grammar = llama.createGrammar({ grammar: text });
    grammars.set(text, grammar);
  }
  return { grammar: await grammar, exact };
}

/** Grammar texts by what they were made from: the same for every runtime. */
const gbnfTexts = new GbnfCache();

/**
 * The target's grammar text, converted once per schema. A strict schema that does not compile is
 * not kept: it is the request's 400, with the request's own field path.
 */
function gbnfFor(target: StructuredTarget): GbnfText {
  const key = `${target.strict ? 'strict' : 'lenient'} ${target.kind} ${JSON.stringify(target.schema)}`;
  let found = gbnfTexts.get(key);
  if (found === undefined) {
    found = convertedGbnf(target);
    gbnfTexts.set(key, found);
  }
  return found;
}

function convertedGbnf(target: StructuredTarget): GbnfText {
  try {
    if (target.strict) return { text: jsonSchemaToGbnf(target.schema), exact: true };
    const { text, widened } = lenientSchemaToGbnf(target.schema);
    return { text, exact: widened.length === 0 };
  } catch (error) {
    if (!(error instanceof GrammarCompileError)) throw error;
    if (target.strict) throw uncompiledStrictSchema(target, error);
    return { text: shapeGbnf(target), exact: false };
  }
}

/**
 * A grammar wider than the schema, so it never forbids a valid answer: `type` holds on its own,
 * whatever the other keywords say, so any value of the declared types includes every valid one.
 */
function shapeGbnf(target: StructuredTarget): string {
  if (target.kind === 'tool-input') return jsonSchemaToGbnf({ type: 'object', additionalProperties: true });
  try {
    return jsonSchemaToGbnf(target.schema.type === undefined ? true : { type: target.schema.type });
  } catch {
    // A malformed `type`: Ajv will say so; the grammar only has to admit JSON.
    return jsonSchemaToGbnf(true);
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
  const where = schemaFieldPath(target.where, error.path);
  return new ServiceError(
    'invalid_request',
    `${where}: ${error.reason}; the llama-cpp backend cannot hold output to this strict schema (drop strict, or write the constraint into a description)`,
  );
}
