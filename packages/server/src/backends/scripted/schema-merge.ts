/**
 * The `allOf` merge for the scripted backend's instance builder: many schemas become one that
 * demands what each demands, so the builder can make one value for all of them.
 */
import { canonicalJson, intersectValues } from '../../json-schema/canonical-json.js';
import { commonTypes } from '../../json-schema/json-types.js';
import { REFERENCE_KEYWORDS } from '../../json-schema/keyword-sets.js';
import { isSchemaObject, withoutKeywords } from '../../json-schema/schema-object.js';
import {
  DROPPED_KEYWORDS,
  EXTRA_PATTERNS_KEYWORD,
  declaredTypes,
  schemaList,
  stringList,
  type JsonSchema,
  type SchemaObject,
} from './schema-references.js';

type Combiner = (existing: unknown, incoming: unknown) => unknown;

const takeLarger: Combiner = (existing, incoming) =>
  typeof existing === 'number' && typeof incoming === 'number'
    ? Math.max(existing, incoming)
    : existing === true || incoming === true;
const takeSmaller: Combiner = (existing, incoming) =>
  typeof existing === 'number' && typeof incoming === 'number'
    ? Math.min(existing, incoming)
    : existing === true || incoming === true;
const bothApply: Combiner = (existing, incoming) => ({ allOf: [existing, incoming] });

/** How two members' values for one keyword become one value that demands both. */
const COMBINERS = new Map<string, Combiner>([
  ['type', (existing, incoming) => commonTypes(typeListOf(existing), typeListOf(incoming))],
  ['required', (existing, incoming) => [...new Set([...stringList(existing), ...stringList(incoming)])]],
  ['properties', combineSchemaMaps],
  ['patternProperties', combineSchemaMaps],
  [
    'enum',
    (existing, incoming) =>
      Array.isArray(existing) && Array.isArray(incoming) ? intersectValues(existing, incoming) : [],
  ],
  ['allOf', (existing, incoming) => [...schemaList(existing), ...schemaList(incoming)]],
  ['anyOf', distributeBranches],
  ['oneOf', distributeBranches],
  ['prefixItems', (existing, incoming) => pairwise(schemaList(existing), schemaList(incoming))],
  ['uniqueItems', (existing, incoming) => existing === true || incoming === true],
  ['multipleOf', combineMultiples],
  [EXTRA_PATTERNS_KEYWORD, (existing, incoming) => [...stringList(existing), ...stringList(incoming)]],
  ['not', (existing, incoming) => ({ anyOf: [existing, incoming] })],
  ...['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains'].map(
    (keyword): [string, Combiner] => [keyword, takeLarger],
  ),
  ...['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains'].map(
    (keyword): [string, Combiner] => [keyword, takeSmaller],
  ),
  ...['items', 'additionalProperties', 'additionalItems', 'contains', 'propertyNames'].map(
    (keyword): [string, Combiner] => [keyword, bothApply],
  ),
]);

/**
 * One schema that demands everything the members demand (best effort: `additionalProperties`
 * is treated as if every member saw all properties). Conflicts that have no single-keyword form
 * are pushed down into `allOf` or distributed over `anyOf`, so building the result terminates.
 */
export function mergeSchemas(members: readonly JsonSchema[]): JsonSchema {
  const merged: SchemaObject = {};
  for (const member of members) {
    if (member === false) return false;
    if (member === true) continue;
    for (const [keyword, value] of Object.entries(foldNullable(member))) {
      if (!DROPPED_KEYWORDS.has(keyword)) Object.assign(merged, mergeKeyword(merged, keyword, value));
    }
  }
  return merged;
}

function mergeKeyword(merged: SchemaObject, keyword: string, incoming: unknown): SchemaObject {
  if (!Object.hasOwn(merged, keyword)) return { [keyword]: incoming };
  const existing = merged[keyword];
  if (REFERENCE_KEYWORDS.includes(keyword)) return { allOf: [...schemaList(merged.allOf), { [keyword]: incoming }] };
  if (keyword === 'const') return canonicalJson(existing) === canonicalJson(incoming) ? {} : { enum: [] };
  if (keyword === 'pattern') {
    return existing === incoming
      ? {}
      : { [EXTRA_PATTERNS_KEYWORD]: [...stringList(merged[EXTRA_PATTERNS_KEYWORD]), incoming] };
  }
  const combiner = COMBINERS.get(keyword);
  return combiner === undefined ? {} : { [keyword]: combiner(existing, incoming) };
}

function foldNullable(schema: SchemaObject): SchemaObject {
  const types = declaredTypes(schema);
  return types === undefined ? schema : { ...withoutKeywords(schema, ['nullable']), type: types };
}

function typeListOf(value: unknown): string[] {
  return typeof value === 'string' ? [value] : stringList(value);
}

function combineSchemaMaps(existing: unknown, incoming: unknown): SchemaObject {
  const combined: SchemaObject = { ...(isSchemaObject(existing) ? existing : {}) };
  for (const [name, schema] of Object.entries(isSchemaObject(incoming) ? incoming : {})) {
    combined[name] = Object.hasOwn(combined, name) ? { allOf: [combined[name], schema] } : schema;
  }
  return combined;
}

/** (A1 | A2) & (B1 | B2) becomes (A1 & (B1 | B2)) | (A2 & (B1 | B2)): one `anyOf`, resolved one level at a time. */
function distributeBranches(existing: unknown, incoming: unknown): JsonSchema[] {
  return schemaList(existing).map((branch) => ({ allOf: [branch, { anyOf: schemaList(incoming) }] }));
}

function pairwise(existing: readonly JsonSchema[], incoming: readonly JsonSchema[]): JsonSchema[] {
  const length = Math.max(existing.length, incoming.length);
  return Array.from({ length }, (_, index) => mergeSchemas([existing[index] ?? true, incoming[index] ?? true]));
}

function combineMultiples(existing: unknown, incoming: unknown): unknown {
  if (typeof existing !== 'number' || typeof incoming !== 'number') return existing;
  if (Number.isInteger(existing / incoming)) return existing;
  if (Number.isInteger(incoming / existing)) return incoming;
  return existing * incoming;
}
