/**
 * What a JSON Schema is when read as data: an object of keywords, or a boolean (true accepts
 * every value, false none). Readers of both the grammar compiler and the scripted backend's
 * instance builder start here; each decides for itself what to do with a malformed value (the
 * grammar refuses it, the builder reads past it).
 */

export type SchemaObject = { [keyword: string]: unknown };
export type JsonSchema = boolean | SchemaObject;

export function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `schema` less `keywords`, in its own key order. */
export function withoutKeywords(schema: SchemaObject, keywords: Iterable<string>): SchemaObject {
  const dropped = new Set(keywords);
  return Object.fromEntries(Object.entries(schema).filter(([keyword]) => !dropped.has(keyword)));
}

/** A well-formed value of a count keyword (`minItems`, `maxLength`, `minProperties`...). */
export function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
