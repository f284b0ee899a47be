/**
 * Validation of values against callers' JSON Schemas (strict tool inputs, output formats, the
 * client's answers). Ajv (schema-dialects.ts) runs callers' `pattern`s through RE2 (re2js):
 * linear time, so `^(a+)+$` cannot stall the event loop, and their compile is budgeted
 * (pattern-budget.ts).
 *
 * Memory (issue 31): an Ajv instance keeps a part of everything it compiled (its scope holds
 * each validator's patterns, enum values and reference functions) for as long as it lives, and a
 * validator keeps its instance alive. So validators are cached by generation: one Ajv instance
 * per draft, and the validators it made, until what it compiled is estimated at
 * GENERATION_BYTES; then a fresh instance takes over and the old one leaves with its validators.
 * The memory held is bounded in bytes, whatever the schemas' count or size.
 */
import type { ValidateFunction } from 'ajv';
import { ServiceError } from './errors.js';
import { PatternBudgetError, withPatternBudget } from './pattern-budget.js';
import { dialectFor, type AnyAjv } from './schema-dialects.js';

/** Estimated bytes one generation's compiles may hold; a generation per draft and formats setting. */
export const GENERATION_BYTES = 16 * 1024 * 1024;

/**
 * What a compiled validator holds, estimated from its schema: measured, about 10 to 15 bytes of
 * generated code and values per character of schema text (1,000 `anyOf` properties, 53 KB of
 * text: 756 KB), a few KB for the smallest, and the ranges of its compiled patterns.
 */
const BYTES_PER_SCHEMA_CHARACTER = 16;
const BYTES_PER_VALIDATOR = 4096;
const BYTES_PER_PATTERN_RUNE = 8;

interface Generation {
  ajv: AnyAjv;
  validators: Map<string, ValidateFunction>;
  bytes: number;
}

const generations = new Map<string, Generation>();

export interface CompileOptions {
  /** Check `format` keywords as well (off for requests, on for the client's answer checks). */
  formats?: boolean;
}

/** A compiled validator; a schema Ajv cannot compile is the caller's mistake: a 400 naming `where`. */
export function compileSchema(schema: unknown, where: string, options: CompileOptions = {}): ValidateFunction {
  const formats = options.formats === true;
  const dialect = dialectFor(schema, where);
  const generationKey = `${dialect.name}${formats ? ' formats' : ''}`;
  const text = JSON.stringify(schema);
  const cached = generations.get(generationKey)?.validators.get(text);
  if (cached) return cached;
  const generation = currentGeneration(generationKey, () => dialect.create(formats));
  const rooted = withRootBase(schema) as object;
  let compiled: { result: ValidateFunction; runes: number };
  try {
    compiled = withPatternBudget(() => generation.ajv.compile(rooted));
  } catch (error) {
    throw new ServiceError('invalid_request', `${where}: not a valid JSON Schema: ${compileFailure(error)}`);
  } finally {
    // Ajv's own cache holds the schema object (the request's) until the instance goes; the
    // generation's map holds the validator instead.
    generation.ajv.removeSchema(rooted);
  }
  generation.validators.set(text, compiled.result);
  generation.bytes +=
    BYTES_PER_VALIDATOR + text.length * BYTES_PER_SCHEMA_CHARACTER + compiled.runes * BYTES_PER_PATTERN_RUNE;
  return compiled.result;
}

/**
 * Checks a schema that is only shown to a model (a non-strict tool's `input_schema`) against its
 * draft's meta-schema, without compiling a validator from it: nothing validates against it, so a
 * compile would cost time and memory for nothing (issue 31: a thousand patterns, 3 to 6 s and
 * 200 MB a tool). A schema that is not one is a 400 naming `where` and the place inside it.
 */
export function checkSchemaDocument(schema: unknown, where: string): void {
  const dialect = dialectFor(schema, where);
  const generationKey = dialect.name;
  const { ajv } = currentGeneration(generationKey, () => dialect.create(false));
  if (ajv.validateSchema(schema as object) === true) return;
  const error = ajv.errors?.[0];
  const detail = error ? `${error.instancePath || '/'} ${error.message ?? 'is invalid'}` : 'it fails its meta-schema';
  throw new ServiceError('invalid_request', `${where}: not a valid JSON Schema: ${detail}`);
}

/** The generation that compiles now, a fresh one once the last has compiled its share. */
function currentGeneration(key: string, create: () => AnyAjv): Generation {
  const generation = generations.get(key);
  if (generation !== undefined && generation.bytes < GENERATION_BYTES) return generation;
  const fresh: Generation = { ajv: create(), validators: new Map(), bytes: 0 };
  generations.set(key, fresh);
  return fresh;
}

function compileFailure(error: unknown): string {
  if (error instanceof PatternBudgetError) return error.message;
  // The caller never wrote the base this service lent its schema; a message names the root as `#`.
  return (error as Error).message.replaceAll(ROOT_BASE_URI, '#');
}

/**
 * Ajv resolves `"$ref": "#"` (recursion through the root) against the root's base URI, which it
 * knows only for a schema it registered or one whose root has an `$id`. Callers' schemas are
 * never registered (schema-dialects.ts), so a root without `$id` is compiled under this one:
 * otherwise every such reference is refused as "can't resolve reference # from id #".
 */
const ROOT_BASE_URI = 'urn:mms:request-schema';

function withRootBase(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || '$id' in schema) return schema;
  return { $id: ROOT_BASE_URI, ...schema };
}

/** The first validation error as one line (`/path must be ...`), or undefined when valid. */
export function schemaViolation(
  schema: unknown,
  value: unknown,
  where = 'schema',
  options: CompileOptions = {},
): string | undefined {
  const validate = compileSchema(schema, where, options);
  if (validate(value)) return undefined;
  const error = validate.errors?.[0];
  if (!error) return 'value does not match the schema';
  return `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`;
}

/** The estimated bytes the cached validators hold, for tests and the attack suite. */
export function compiledValidatorBytes(): number {
  let bytes = 0;
  for (const generation of generations.values()) bytes += generation.bytes;
  return bytes;
}
