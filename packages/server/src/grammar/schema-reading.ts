/**
 * Reading JSON Schemas for the GBNF compiler: the keyword whitelist, typed keyword readers that
 * reject malformed values, and `$ref` JSON-pointer resolution. Every failure is a
 * GrammarCompileError naming the JSON pointer (as a URI fragment, `#/properties/a`) at fault.
 */

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

export type SchemaObject = { [keyword: string]: unknown };
export type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

export const JSON_TYPES: readonly JsonType[] = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

/** Keywords that never change which instances are valid, so the compiler may skip them. */
export const ANNOTATION_KEYWORDS: ReadonlySet<string> = new Set([
  'title',
  'description',
  'default',
  'examples',
  '$comment',
  '$schema',
  'deprecated',
  'readOnly',
  'writeOnly',
  // Definition containers only matter through the `$ref`s that point into them.
  '$defs',
  'definitions',
]);

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
]);

export function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function escapePointerSegment(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

export function childPath(path: string, ...segments: readonly string[]): string {
  return [path, ...segments.map(escapePointerSegment)].join('/');
}

/** The keywords of `schema` that constrain instances (annotations left out). */
export function constrainingKeywords(schema: SchemaObject): string[] {
  return Object.keys(schema).filter((keyword) => !ANNOTATION_KEYWORDS.has(keyword));
}

/** Refuses the first keyword that is neither compiled nor a pure annotation. */
export function checkKeywords(schema: SchemaObject, path: string): void {
  for (const keyword of constrainingKeywords(schema)) {
    if (!COMPILED_KEYWORDS.has(keyword)) {
      throw new GrammarCompileError(childPath(path, keyword), `unsupported keyword "${keyword}"`);
    }
  }
}

/** The declared types, or undefined when `type` is absent (every type allowed). */
export function readTypes(schema: SchemaObject, path: string): JsonType[] | undefined {
  const declared = schema.type;
  if (declared === undefined) return undefined;
  const list: unknown[] = Array.isArray(declared) ? declared : [declared];
  const types = list.filter((item): item is JsonType => JSON_TYPES.includes(item as JsonType));
  if (types.length !== list.length || types.length === 0) {
    throw new GrammarCompileError(childPath(path, 'type'), `malformed "type" ${JSON.stringify(declared)}`);
  }
  return types;
}

export function readStringList(schema: SchemaObject, keyword: string, path: string): string[] {
  const value = schema[keyword];
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new GrammarCompileError(childPath(path, keyword), `"${keyword}" must be an array of strings`);
  }
  return [...new Set(value as string[])];
}

export function readCount(schema: SchemaObject, keyword: string, path: string): number | undefined {
  const value = schema[keyword];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new GrammarCompileError(childPath(path, keyword), `"${keyword}" must be a non-negative integer`);
  }
  return value;
}

export function readSchemaMap(schema: SchemaObject, keyword: string, path: string): [string, unknown][] {
  const value = schema[keyword];
  if (value === undefined) return [];
  if (!isSchemaObject(value)) {
    throw new GrammarCompileError(childPath(path, keyword), `"${keyword}" must be an object of schemas`);
  }
  return Object.entries(value);
}

/** `#/a~1b/c` to its decoded segments (`['a/b', 'c']`); only same-document pointers are supported. */
export function pointerSegments(reference: unknown, path: string): string[] {
  const referencePath = childPath(path, '$ref');
  if (typeof reference !== 'string' || !reference.startsWith('#')) {
    throw new GrammarCompileError(
      referencePath,
      `unsupported "$ref" ${JSON.stringify(reference)} (only "#..." pointers)`,
    );
  }
  const fragment = reference.slice(1);
  if (fragment !== '' && !fragment.startsWith('/')) {
    throw new GrammarCompileError(referencePath, `unsupported "$ref" anchor ${JSON.stringify(reference)}`);
  }
  try {
    // A fragment is URI-encoded (`%24defs`) before it is a JSON pointer (`~0`, `~1`).
    return fragment === ''
      ? []
      : decodeURIComponent(fragment)
          .slice(1)
          .split('/')
          .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  } catch {
    throw new GrammarCompileError(referencePath, `malformed "$ref" ${JSON.stringify(reference)}`);
  }
}

/** The schema a pointer names inside `root`. */
export function resolvePointer(root: unknown, segments: readonly string[], path: string): unknown {
  let current: unknown = root;
  for (const segment of segments) {
    const container: unknown = current;
    if (Array.isArray(container)) current = /^(0|[1-9][0-9]*)$/.test(segment) ? container[Number(segment)] : undefined;
    else current = isSchemaObject(container) && Object.hasOwn(container, segment) ? container[segment] : undefined;
    if (current === undefined) {
      throw new GrammarCompileError(
        childPath(path, '$ref'),
        `"$ref" target ${childPath('#', ...segments)} does not exist`,
      );
    }
  }
  return current;
}
