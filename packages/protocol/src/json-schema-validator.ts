/**
 * Validation of values against callers' JSON Schemas (tool inputs, output formats).
 * Ajv runs callers' `pattern`s through RE2 (re2js): linear time, so `^(a+)+$` cannot stall
 * the event loop. Compiled validators are cached by the schema's JSON text.
 */
import { RE2JS } from 're2js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { ServiceError } from './errors.js';
import { FORMAT_CHECKS } from './format-checks.js';

/** Ajv's `code.regExp` hook: the wrapper must expose `toString()`, Ajv caches on it. */
function re2RegExp(pattern: string, flags: string) {
  const compiled = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
  return {
    test: (value: string) => compiled.matcher(value).find(),
    toString: () => `/${pattern}/${flags}`,
  };
}

const ajv = new Ajv2020({
  strict: false,
  allErrors: false,
  validateFormats: false,
  // Callers' schemas are compiled, never registered: a registered `$id` would stay for the
  // life of the process, and a later schema with the same `$id` (another request's, or a
  // second tool's in the same request) would be refused as a duplicate.
  addUsedSchema: false,
  // A schema that fails to compile is the caller's 400; Ajv's own log would print the whole generated code.
  logger: false,
  code: { regExp: re2RegExp as never },
});

/**
 * The same, and `format` checked too: the calling client enforces on answers the constraints
 * that strict schemas cannot carry (issue 5). Formats outside FORMAT_CHECKS are not checked.
 */
const formatAjv = new Ajv2020({
  strict: false,
  allErrors: false,
  validateFormats: true,
  formats: FORMAT_CHECKS,
  addUsedSchema: false,
  logger: false,
  code: { regExp: re2RegExp as never },
});

const cache = new Map<string, ValidateFunction>();
const CACHE_LIMIT = 512;

export interface CompileOptions {
  /** Check `format` keywords as well (off for requests, on for the client's answer checks). */
  formats?: boolean;
}

/** A compiled validator; a schema Ajv cannot compile is the caller's mistake: a 400 naming `where`. */
export function compileSchema(schema: unknown, where: string, options: CompileOptions = {}): ValidateFunction {
  const key = `${options.formats === true ? 'f' : '-'}${JSON.stringify(schema)}`;
  const cached = cache.get(key);
  if (cached) return cached;
  let validate: ValidateFunction;
  try {
    validate = (options.formats === true ? formatAjv : ajv).compile(schema as object);
  } catch (error) {
    throw new ServiceError('invalid_request', `${where}: not a valid JSON Schema: ${(error as Error).message}`);
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, validate);
  return validate;
}

/** The first validation error as one line (`/path must be ...`), or undefined when valid. */
export function schemaViolation(schema: unknown, value: unknown, where = 'schema', options: CompileOptions = {}): string | undefined {
  const validate = compileSchema(schema, where, options);
  if (validate(value)) return undefined;
  const error = validate.errors?.[0];
  if (!error) return 'value does not match the schema';
  return `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`;
}
