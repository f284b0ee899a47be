/**
 * Schema plumbing for the scripted backend's instance builder: the errors it throws, lenient
 * keyword readers (a malformed value reads as absent) and `$ref` targets as schemas. Pointers,
 * `$ref` resolution and the keyword sets come from the shared toolkit (../../json-schema/).
 * Nothing here validates; it only reads schemas.
 */
import { childPointer } from '../../json-schema/json-pointer.js';
import { valueHasType } from '../../json-schema/json-types.js';
import { ANNOTATION_KEYWORDS, IDENTIFIER_KEYWORDS, REFERENCE_KEYWORDS } from '../../json-schema/keyword-sets.js';
import { resolveReference } from '../../json-schema/reference-resolution.js';
import {
  isNonNegativeInteger,
  isSchemaObject,
  type JsonSchema,
  type SchemaObject,
} from '../../json-schema/schema-object.js';
import { compilePattern } from './schema-patterns.js';

export type { JsonSchema, SchemaObject } from '../../json-schema/schema-object.js';

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

/**
 * Keywords that never constrain a value, so merging or building can drop them: annotations and
 * identifiers, except `default`, which the builder answers with.
 */
export const DROPPED_KEYWORDS: ReadonlySet<string> = new Set(
  [...ANNOTATION_KEYWORDS, ...IDENTIFIER_KEYWORDS].filter((keyword) => keyword !== 'default'),
);

/** Where merged schemas keep the second and later `pattern`s, since one keyword holds only one. */
export const EXTRA_PATTERNS_KEYWORD = '$extraPatterns';

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
  return isNonNegativeInteger(value) ? value : undefined;
}

export function referenceOf(schema: SchemaObject): string | undefined {
  const reference = REFERENCE_KEYWORDS.map((keyword) => schema[keyword]).find((value) => typeof value === 'string');
  return typeof reference === 'string' ? reference : undefined;
}

export function hasConstraints(schema: SchemaObject): boolean {
  return Object.keys(schema).some((keyword) => !DROPPED_KEYWORDS.has(keyword));
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

export function typesAllow(types: readonly string[], value: unknown): boolean {
  return types.some((type) => valueHasType(value, type));
}

/** The schema a reference names, and its pointer; a BuildFailure at `path` when there is none. */
export function referenceTarget(
  root: JsonSchema,
  reference: string,
  path: string,
): { target: JsonSchema; pointer: string } {
  const resolved = resolveReference(root, reference);
  if (resolved.problem !== undefined) throw new BuildFailure(path, resolved.problem);
  const target = asSchema(resolved.target);
  if (target === undefined) throw new BuildFailure(path, `"$ref" target ${resolved.pointer} is not a schema`);
  return { target, pointer: resolved.pointer };
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
    matching.push({ subschema: asSchema(properties[name]) ?? true, path: childPointer(path, 'properties', name) });
  }
  for (const [pattern, subschema] of Object.entries(patterns)) {
    if (compilePattern(pattern)?.test(name) !== true) continue;
    matching.push({
      subschema: asSchema(subschema) ?? true,
      path: childPointer(path, 'patternProperties', pattern),
    });
  }
  const [first] = matching;
  if (first === undefined)
    return {
      subschema: asSchema(schema.additionalProperties) ?? true,
      path: childPointer(path, 'additionalProperties'),
    };
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
