/**
 * `enum` and `const` values: which of them survive the schema's `type`, compared as JSON values.
 * They become exact literals in the grammar, so each one must really be JSON.
 */
import { GrammarCompileError, childPath, isSchemaObject, type JsonType } from './schema-reading.js';

/** True for values JSON.stringify writes faithfully (no NaN, Infinity, undefined, functions...). */
export function isJsonValue(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  return isSchemaObject(value) && Object.values(value).every(isJsonValue);
}

/** JSON with object keys sorted, so that equal JSON values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isSchemaObject(value)) {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

export function valueHasType(value: unknown, type: JsonType): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isSchemaObject(value);
  }
}

function readEnum(schema: { [keyword: string]: unknown }, path: string): unknown[] | undefined {
  const values = schema.enum;
  if (values === undefined) return undefined;
  if (!Array.isArray(values) || values.length === 0 || !values.every(isJsonValue)) {
    throw new GrammarCompileError(childPath(path, 'enum'), '"enum" must be a non-empty array of JSON values');
  }
  return values;
}

/**
 * The distinct values allowed by `enum` and/or `const`, narrowed by `types` when given.
 * Throws when none is left, as a grammar cannot express "no value at all".
 */
export function allowedLiterals(
  schema: { [keyword: string]: unknown },
  types: readonly JsonType[] | undefined,
  path: string,
): unknown[] {
  let values = readEnum(schema, path);
  if (Object.hasOwn(schema, 'const')) {
    const constant = schema.const;
    if (!isJsonValue(constant)) throw new GrammarCompileError(childPath(path, 'const'), '"const" must be a JSON value');
    values = (values ?? [constant]).filter((value) => canonicalJson(value) === canonicalJson(constant));
  }
  const typed = (values ?? []).filter(
    (value) => types === undefined || types.some((type) => valueHasType(value, type)),
  );
  const distinct = new Map(typed.map((value) => [canonicalJson(value), value]));
  if (distinct.size === 0) throw new GrammarCompileError(path, 'no value satisfies "enum"/"const" with "type"');
  return [...distinct.values()];
}
