/**
 * `enum` and `const` values: which of them survive the schema's `type`, compared as JSON values.
 * They become exact literals in the grammar, so each one must really be JSON.
 */
import { canonicalJson, intersectValues } from '../json-schema/canonical-json.js';
import { childPointer } from '../json-schema/json-pointer.js';
import { valueHasType, type JsonType } from '../json-schema/json-types.js';
import { isSchemaObject, type SchemaObject } from '../json-schema/schema-object.js';
import { GrammarCompileError } from './schema-reading.js';

/** True for values JSON.stringify writes faithfully (no NaN, Infinity, undefined, functions...). */
export function isJsonValue(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  return isSchemaObject(value) && Object.values(value).every(isJsonValue);
}

/** The values `enum` and `const` allow together (`enum`'s members equal to `const`), or undefined when the schema has neither. */
export function listedLiterals(schema: SchemaObject, path: string): unknown[] | undefined {
  let values: unknown[] | undefined;
  if (Object.hasOwn(schema, 'enum')) {
    const listed = schema.enum;
    if (!Array.isArray(listed) || listed.length === 0 || !listed.every(isJsonValue)) {
      throw new GrammarCompileError(childPointer(path, 'enum'), '"enum" must be a non-empty array of JSON values');
    }
    values = listed;
  }
  if (Object.hasOwn(schema, 'const')) {
    const constant = schema.const;
    if (!isJsonValue(constant))
      throw new GrammarCompileError(childPointer(path, 'const'), '"const" must be a JSON value');
    values = intersectValues(values ?? [constant], [constant]);
  }
  return values;
}

/**
 * The distinct values allowed by `enum` and/or `const`, narrowed by `types` when given.
 * Throws when none is left, as a grammar cannot express "no value at all".
 */
export function allowedLiterals(schema: SchemaObject, types: readonly JsonType[] | undefined, path: string): unknown[] {
  const typed = (listedLiterals(schema, path) ?? []).filter(
    (value) => types === undefined || types.some((type) => valueHasType(value, type)),
  );
  const distinct = new Map(typed.map((value) => [canonicalJson(value), value]));
  if (distinct.size === 0) throw new GrammarCompileError(path, 'no value satisfies "enum"/"const" with "type"');
  return [...distinct.values()];
}
