/**
 * Reading JSON Schemas for the GBNF compiler: which keywords it compiles, and typed keyword
 * readers that refuse malformed values. Pointers, `$ref` resolution and the keyword sets come
 * from the shared toolkit (../json-schema/); what is the compiler's own is that every failure is
 * a GrammarCompileError naming the JSON pointer (as a URI fragment, `#/properties/a`) at fault.
 */
import { ANNOTATION_KEYWORDS } from '../json-schema/keyword-sets.js';
import { childPointer } from '../json-schema/json-pointer.js';
import { isJsonType, type JsonType } from '../json-schema/json-types.js';
import { resolveReference } from '../json-schema/reference-resolution.js';
import { isNonNegativeInteger, isSchemaObject, type SchemaObject } from '../json-schema/schema-object.js';

/** The schema (or a part of it) cannot be compiled; `path` is the JSON pointer of the culprit. */
export class GrammarCompileError extends Error {
  readonly path: string;
  /** What is wrong, without the place: for messages that name the place their own way. */
  readonly reason: string;

  constructor(path: string, reason: string) {
    super(`${reason} at ${path}`);
    this.name = 'GrammarCompileError';
    this.path = path;
    this.reason = reason;
  }
}

/** The constraining keywords the compiler turns into grammar; anything else is refused. */
export const COMPILED_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'enum',
  'const',
  'anyOf',
  '$ref',
  // Strings (string-grammar.ts) and integers (integer-range.ts): issue 35.
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
]);

/** The keywords of `schema` that constrain instances (annotations left out). */
export function constrainingKeywords(schema: SchemaObject): string[] {
  return Object.keys(schema).filter((keyword) => !ANNOTATION_KEYWORDS.has(keyword));
}

/** Refuses the first keyword that is neither compiled nor a pure annotation. */
export function checkKeywords(schema: SchemaObject, path: string): void {
  const keyword = uncompiledKeywords(schema)[0];
  if (keyword !== undefined) throw uncompiledKeyword(keyword, path);
}

/** The keywords of `schema` that constrain values and are not compiled. */
export function uncompiledKeywords(schema: SchemaObject): string[] {
  return constrainingKeywords(schema).filter((keyword) => !COMPILED_KEYWORDS.has(keyword));
}

export function uncompiledKeyword(keyword: string, path: string): GrammarCompileError {
  return new GrammarCompileError(childPointer(path, keyword), `unsupported keyword "${keyword}"`);
}

/** The declared types, or undefined when `type` is absent (every type allowed). */
export function readTypes(schema: SchemaObject, path: string): JsonType[] | undefined {
  const declared = schema.type;
  if (declared === undefined) return undefined;
  const list: unknown[] = Array.isArray(declared) ? declared : [declared];
  const types = list.filter(isJsonType);
  if (types.length !== list.length || types.length === 0) {
    throw new GrammarCompileError(childPointer(path, 'type'), `malformed "type" ${JSON.stringify(declared)}`);
  }
  return types;
}

export function readStringList(schema: SchemaObject, keyword: string, path: string): string[] {
  const value = schema[keyword];
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new GrammarCompileError(childPointer(path, keyword), `"${keyword}" must be an array of strings`);
  }
  return [...new Set(value as string[])];
}

export function readCount(schema: SchemaObject, keyword: string, path: string): number | undefined {
  const value = schema[keyword];
  if (value === undefined) return undefined;
  if (!isNonNegativeInteger(value)) {
    throw new GrammarCompileError(childPointer(path, keyword), `"${keyword}" must be a non-negative integer`);
  }
  return value;
}

export function readSchemaMap(schema: SchemaObject, keyword: string, path: string): [string, unknown][] {
  const value = schema[keyword];
  if (value === undefined) return [];
  if (!isSchemaObject(value)) {
    throw new GrammarCompileError(childPointer(path, keyword), `"${keyword}" must be an object of schemas`);
  }
  return Object.entries(value);
}

/** The schema `schema.$ref` names inside `document`, and its pointer; a GrammarCompileError at the `$ref` otherwise. */
export function referenceTarget(
  document: unknown,
  schema: SchemaObject,
  path: string,
): { target: unknown; pointer: string } {
  const resolved = resolveReference(document, schema.$ref);
  if (resolved.problem !== undefined) throw new GrammarCompileError(childPointer(path, '$ref'), resolved.problem);
  return resolved;
}
