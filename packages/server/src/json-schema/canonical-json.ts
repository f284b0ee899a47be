/**
 * JSON values compared as JSON: `enum`, `const` and `uniqueItems` mean equality of values, and
 * `{"a": 1, "b": 2}` equals `{"b": 2, "a": 1}`.
 */
import { isSchemaObject } from './schema-object.js';

/** JSON with object keys sorted, so that equal JSON values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (!isSchemaObject(value)) return JSON.stringify(value) ?? 'null';
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
}

/** The members of `first` equal, as JSON, to some member of `second`, in `first`'s order. */
export function intersectValues(first: readonly unknown[], second: readonly unknown[]): unknown[] {
  const allowed = new Set(second.map(canonicalJson));
  return first.filter((value) => allowed.has(canonicalJson(value)));
}
