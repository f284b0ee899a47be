/**
 * Validation of values against callers' JSON Schemas (tool inputs, output formats).
 * Ajv (one instance per draft: schema-dialects.ts) runs callers' `pattern`s through RE2
 * (re2js): linear time, so `^(a+)+$` cannot stall the event loop. Compiled validators are
 * cached by the schema's JSON text.
 */
import type { ValidateFunction } from 'ajv';
import { ServiceError } from './errors.js';
import { ajvFor } from './schema-dialects.js';

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
  const ajv = ajvFor(schema, where, options.formats === true);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(withRootBase(schema) as object);
  } catch (error) {
    // The caller never wrote the base this service lent its schema; a message names the root as `#`.
    const message = (error as Error).message.replaceAll(ROOT_BASE_URI, '#');
    throw new ServiceError('invalid_request', `${where}: not a valid JSON Schema: ${message}`);
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, validate);
  return validate;
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
