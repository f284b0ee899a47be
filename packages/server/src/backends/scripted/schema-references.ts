/**
 * Schema plumbing for the scripted backend's instance builder: the errors it throws, keyword
 * readers and `$ref` resolution. Nothing here validates; it only reads schemas.
 */
import { compilePattern } from './schema-patterns.js';

export type JsonSchema = boolean | { [keyword: string]: unknown };
export type SchemaObject = { [keyword: string]: unknown };

/** No instance could be built; `path` is the JSON pointer (as a URI fragment) of the culprit. */
export class SchemaInstanceError extends Error {
  readonly path: string;
  /** Why no instance was built, without the path: for messages that name the place their own way. */
  readonly reason: string;

  constructor(path: string, message: string, reason = message) {
    super(message);
    this.name = 'SchemaInstanceError';
    this.path = path;
    this.reason = reason;
  }
}

/**
 * What the builder throws internally, turned into a SchemaInstanceError at the public boundary.
 * Not an Error on purpose: anyOf backtracking throws thousands of these, and capturing a stack
 * trace for each one dominated the run time.
 */
export class BuildFailure {
  constructor(
    readonly path: string,
    readonly reason: string,
    readonly cause?: BuildFailure,
  ) {}

  rootCause(): BuildFailure {
    return this.cause === undefined ? this : this.cause.rootCause();
  }

  toError(): SchemaInstanceError {
    // Only the innermost cause is quoted, so messages stay short however deep the failure was.
    const root = this.rootCause();
    const detail = root === this ? '' : ` (first failure: ${root.reason} at ${root.path})`;
    return new SchemaInstanceError(this.path, `${this.reason} at ${this.path}${detail}`, `${this.reason}${detail}`);
  }
}

export const REFERENCE_KEYWORDS: readonly string[] = ['$ref', '$dynamicRef', '$recursiveRef'];

/** Keywords that never constrain a value, so merging or building can drop them. */
export const ANNOTATION_KEYWORDS: ReadonlySet<string> = new Set([
  '$schema',
  '$id',
  '$anchor',
  '$dynamicAnchor',
  '$recursiveAnchor',
  '$comment',
  '$defs',
  'definitions',
  'title',
  'description',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

/** Where merged schemas keep the second and later `pattern`s, since one keyword holds only one. */
export const EXTRA_PATTERNS_KEYWORD = '$extraPatterns';

export function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asSchema(value: unknown): JsonSchema | undefined {
  return typeof value === 'boolean' || isSchemaObject(value) ? value : undefined;
}

export function schemaList(value: unknown): JsonSchema[] {
  return Array.isArray(value) ? value.map(asSchema).filter((schema) => schema !== undefined) : [];
}

export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

export function nonNegativeInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

export function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

export function referenceOf(schema: SchemaObject): string | undefined {
  const reference = REFERENCE_KEYWORDS.map((keyword) => schema[keyword]).find((value) => typeof value === 'string');
  return typeof reference === 'string' ? reference : undefined;
}

export function withoutKeywords(schema: SchemaObject, keywords: Iterable<string>): SchemaObject {
  const dropped = new Set(keywords);
  return Object.fromEntries(Object.entries(schema).filter(([keyword]) => !dropped.has(keyword)));
}

export function hasConstraints(schema: SchemaObject): boolean {
  return Object.keys(schema).some((keyword) => !ANNOTATION_KEYWORDS.has(keyword));
}

/** Types the schema names, with OpenAPI's `nullable: true` folded in as "null". */
export function declaredTypes(schema: SchemaObject): string[] | undefined {
  const raw = schema.type;
  const types = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? stringList(raw) : undefined;
  if (types === undefined || schema.nullable !== true || types.includes('null')) return types;
  return [...types, 'null'];
}

const KEYWORDS_IMPLYING_TYPE: ReadonlyArray<[string, readonly string[]]> = [
  ['object', ['properties', 'required', 'additionalProperties', 'patternProperties', 'minProperties', 'maxProperties']],
  ['array', ['items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains']],
  ['string', ['minLength', 'maxLength', 'pattern', 'format']],
  ['number', ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']],
];

/** The type an untyped schema's keywords point at; a schema author who wrote `minLength` meant a string. */
export function inferredType(schema: SchemaObject): string | undefined {
  return KEYWORDS_IMPLYING_TYPE.find(([, keywords]) => keywords.some((keyword) => keyword in schema))?.[0];
}

export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

export function typesAllow(types: readonly string[], value: unknown): boolean {
  const type = jsonTypeOf(value);
  return types.includes(type) || (type === 'integer' && types.includes('number'));
}

/** Key-order-independent JSON, so equal objects compare equal for enum and uniqueItems checks. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (!isSchemaObject(value)) return JSON.stringify(value) ?? 'null';
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
}

/** Resolves a same-document reference: "#", "#/json/pointer", "#anchor", or the root `$id` plus one of those. */
export function resolveReference(root: JsonSchema, reference: string, path: string): JsonSchema {
  const hashIndex = reference.indexOf('#');
  const base = hashIndex < 0 ? reference : reference.slice(0, hashIndex);
  const fragment = hashIndex < 0 ? '' : reference.slice(hashIndex + 1);
  const rootId = isSchemaObject(root) && typeof root.$id === 'string' ? root.$id.replace(/#$/, '') : undefined;
  if (base !== '' && base !== rootId) {
    throw new BuildFailure(path, `cannot resolve $ref "${reference}" outside this schema`);
  }
  const target = fragment === '' || fragment.startsWith('/') ? walkPointer(root, fragment) : findAnchor(root, fragment);
  if (target === undefined) throw new BuildFailure(path, `cannot resolve $ref "${reference}"`);
  return target;
}

function walkPointer(root: JsonSchema, fragment: string): JsonSchema | undefined {
  let current: unknown = root;
  for (const rawSegment of fragment.split('/').slice(1)) {
    const segment = decodeSegment(rawSegment);
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
    else if (isSchemaObject(current) && Object.hasOwn(current, segment)) current = current[segment];
    else return undefined;
  }
  return asSchema(current);
}

function decodeSegment(segment: string): string {
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    // A stray "%" is not an escape; the raw text is the best guess at the key.
  }
  return decoded.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Values under these keywords are data, not schemas, so an "$anchor" inside them means nothing. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

function findAnchor(root: JsonSchema, name: string): JsonSchema | undefined {
  const pending: unknown[] = [root];
  const seen = new Set<unknown>();
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    if (Array.isArray(current)) {
      pending.push(...current);
      continue;
    }
    const record = current as SchemaObject;
    if (record.$anchor === name || record.$dynamicAnchor === name || record.$id === `#${name}`) return record;
    for (const [keyword, value] of Object.entries(record)) if (!DATA_KEYWORDS.has(keyword)) pending.push(value);
  }
  return undefined;
}

/** Every schema that applies to property `name`: its `properties` entry and matching patternProperties, else additionalProperties. */
export function propertySchema(
  schema: SchemaObject,
  name: string,
  path: string,
): { subschema: JsonSchema; path: string } {
  const properties = isSchemaObject(schema.properties) ? schema.properties : {};
  const patterns = isSchemaObject(schema.patternProperties) ? schema.patternProperties : {};
  const matching: Array<{ subschema: JsonSchema; path: string }> = [];
  if (Object.hasOwn(properties, name)) {
    matching.push({ subschema: asSchema(properties[name]) ?? true, path: `${path}/properties/${escapePointer(name)}` });
  }
  for (const [pattern, subschema] of Object.entries(patterns)) {
    if (compilePattern(pattern)?.test(name) !== true) continue;
    matching.push({
      subschema: asSchema(subschema) ?? true,
      path: `${path}/patternProperties/${escapePointer(pattern)}`,
    });
  }
  const [first] = matching;
  if (first === undefined)
    return { subschema: asSchema(schema.additionalProperties) ?? true, path: `${path}/additionalProperties` };
  return matching.length === 1
    ? first
    : { subschema: { allOf: matching.map((match) => match.subschema) }, path: first.path };
}

export interface ItemLayout {
  readonly prefix: readonly JsonSchema[];
  readonly prefixKeyword: string;
  readonly rest: JsonSchema;
  readonly restKeyword: string;
  /** How many leading items must also match `contains`. */
  readonly containing: number;
}

/** 2020-12 `prefixItems` + `items`, or the older tuple form `items: [...]` + `additionalItems`. */
export function itemLayout(schema: SchemaObject): ItemLayout {
  const containing = 'contains' in schema ? (nonNegativeInteger(schema.minContains) ?? 1) : 0;
  if (Array.isArray(schema.prefixItems) || !Array.isArray(schema.items)) {
    const rest = asSchema(schema.items) ?? true;
    return {
      prefix: schemaList(schema.prefixItems),
      prefixKeyword: 'prefixItems',
      rest,
      restKeyword: 'items',
      containing,
    };
  }
  const rest = asSchema(schema.additionalItems) ?? true;
  return { prefix: schemaList(schema.items), prefixKeyword: 'items', rest, restKeyword: 'additionalItems', containing };
}
