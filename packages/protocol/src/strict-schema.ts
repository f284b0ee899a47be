/**
 * Endpoint rule 1: under `strict: true` only the spec's keyword list is accepted, checked in
 * every subschema (properties, items, anyOf, $defs, definitions, additionalProperties).
 * Also the size and depth caps that every tool schema obeys. Iterative: no stack overflow.
 */
import { SCHEMA_LIMITS, STRICT_SCHEMA_KEYWORDS } from './constants.js';

export interface SchemaProblem {
  /** Path from the schema root, e.g. `properties.tags.items`. Empty for the root. */
  path: string;
  message: string;
  /** Set when the problem is a keyword outside the strict list. */
  keyword?: string;
}

interface Visit {
  schema: unknown;
  path: string[];
  depth: number;
}

/** Keywords whose value is one subschema or a map / list of subschemas. */
const SUBSCHEMA_MAPS = ['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas'];
const SUBSCHEMA_LISTS = ['anyOf', 'allOf', 'oneOf', 'prefixItems'];
/** Keywords whose entries the cap on entries counts (`SCHEMA_LIMITS.maxEntries`). */
const COUNTED_KEYWORDS = [...SUBSCHEMA_MAPS, ...SUBSCHEMA_LISTS, 'required', 'enum'];
const SINGLE_SUBSCHEMAS = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
];

/** Keywords whose values no validator is compiled from: their text is not counted. */
const ANNOTATION_KEYWORDS = new Set(['description', 'title', '$comment', 'examples', 'default']);
const SUBSCHEMA_KEYWORDS = new Set([...SUBSCHEMA_MAPS, ...SUBSCHEMA_LISTS, ...SINGLE_SUBSCHEMAS]);

/** The first problem in `schema`, or undefined. `strict` adds the keyword check. */
export function findSchemaProblem(schema: unknown, options: { strict: boolean }): SchemaProblem | undefined {
  const stack: Visit[] = [{ schema, path: [], depth: 1 }];
  let visited = 0;
  let compiledCharacters = 0;
  while (stack.length > 0) {
    const visit = stack.pop()!;
    visited += 1;
    if (visited > SCHEMA_LIMITS.maxSubschemas) {
      return { path: '', message: `the schema has more than ${SCHEMA_LIMITS.maxSubschemas} subschemas` };
    }
    const problem = checkNode(visit, options.strict);
    if (problem) return problem;
    compiledCharacters += compiledText(visit.schema);
    if (compiledCharacters > SCHEMA_LIMITS.maxCompiledCharacters) {
      return {
        path: visit.path.join('.'),
        message: `the schema's names and values hold more than ${SCHEMA_LIMITS.maxCompiledCharacters} characters (descriptions and titles aside)`,
      };
    }
    stack.push(...childrenOf(visit));
  }
  return undefined;
}

/**
 * Characters of one schema node that a validator is compiled from: its keys, the names in its
 * subschema maps, and the strings and keys of its other keywords' values. Subschemas count when
 * they are visited themselves.
 */
function compiledText(schema: unknown): number {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 0;
  let characters = 0;
  for (const [keyword, value] of Object.entries(schema)) {
    characters += keyword.length;
    if (ANNOTATION_KEYWORDS.has(keyword)) continue;
    if (SUBSCHEMA_MAPS.includes(keyword) && value && typeof value === 'object' && !Array.isArray(value))
      for (const name of Object.keys(value)) characters += name.length;
    else if (!SUBSCHEMA_KEYWORDS.has(keyword)) characters += valueText(value);
  }
  return characters;
}

/** Characters of the strings and keys in a JSON value; iterative, as the value may be deep. */
function valueText(value: unknown): number {
  let characters = 0;
  const pending = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') characters += next.length;
    else if (Array.isArray(next)) for (const item of next) pending.push(item);
    else if (next !== null && typeof next === 'object')
      for (const [key, entry] of Object.entries(next)) {
        characters += key.length;
        pending.push(entry);
      }
  }
  return characters;
}

function checkNode({ schema, path, depth }: Visit, strict: boolean): SchemaProblem | undefined {
  const where = path.join('.');
  if (depth > SCHEMA_LIMITS.maxDepth) {
    return { path: where, message: `the schema nests deeper than ${SCHEMA_LIMITS.maxDepth} levels` };
  }
  if (typeof schema === 'boolean') return undefined;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    return { path: where, message: 'a schema must be an object or a boolean' };
  }
  const crowded = crowdedKeyword(schema as Record<string, unknown>);
  if (crowded)
    return {
      path: where,
      message: `"${crowded.keyword}" has ${crowded.entries} entries; at most ${SCHEMA_LIMITS.maxEntries} are accepted in one keyword`,
    };
  if (!strict) return undefined;
  const keyword = Object.keys(schema).find((key) => !STRICT_SCHEMA_KEYWORDS.has(key));
  if (keyword === undefined) return undefined;
  return {
    path: where,
    keyword,
    message: `keyword "${keyword}" is not supported with strict: true (accepted: ${[...STRICT_SCHEMA_KEYWORDS].join(', ')}); write the constraint into the field's description instead`,
  };
}

function crowdedKeyword(node: Record<string, unknown>): { keyword: string; entries: number } | undefined {
  for (const keyword of COUNTED_KEYWORDS) {
    const value = node[keyword];
    const entries = Array.isArray(value)
      ? value.length
      : value && typeof value === 'object'
        ? Object.keys(value).length
        : 0;
    if (entries > SCHEMA_LIMITS.maxEntries) return { keyword, entries };
  }
  return undefined;
}

function childrenOf({ schema, path, depth }: Visit): Visit[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [];
  const node = schema as Record<string, unknown>;
  const children: Visit[] = [];
  const add = (child: unknown, childPath: string[]) =>
    children.push({ schema: child, path: childPath, depth: depth + 1 });
  for (const keyword of SUBSCHEMA_MAPS) {
    const map = node[keyword];
    if (map && typeof map === 'object' && !Array.isArray(map)) {
      for (const [name, child] of Object.entries(map)) add(child, [...path, keyword, name]);
    }
  }
  for (const keyword of SUBSCHEMA_LISTS) {
    const list = node[keyword];
    if (Array.isArray(list)) list.forEach((child, index) => add(child, [...path, keyword, String(index)]));
  }
  for (const keyword of SINGLE_SUBSCHEMAS) {
    const child = node[keyword];
    if (Array.isArray(child)) child.forEach((item, index) => add(item, [...path, keyword, String(index)]));
    else if (child !== undefined) add(child, [...path, keyword]);
  }
  return children.reverse();
}
