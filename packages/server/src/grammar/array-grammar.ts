/**
 * Array schemas to GBNF: `items` (one schema for every element), `minItems` and `maxItems`.
 * Tuple forms (`items` as an array, `prefixItems`) are refused by the keyword check or here.
 */
import type { RuleTarget } from './gbnf-rules.js';
import type { NestedCompiler } from './object-grammar.js';
import { childPointer } from '../json-schema/json-pointer.js';
import type { SchemaObject } from '../json-schema/schema-object.js';
import { GrammarCompileError, readCount } from './schema-reading.js';

/**
 * Largest minItems/maxItems compiled. llama.cpp expands `x{m,n}` into about n rules, so a large
 * bound bloats every sampling step; the caller falls back instead.
 */
export const ITEM_COUNT_LIMIT = 100;

interface ItemBounds {
  readonly minimum: number;
  /** Infinity when unbounded. */
  readonly maximum: number;
}

function readBounds(schema: SchemaObject, path: string): ItemBounds {
  const minimum = readCount(schema, 'minItems', path) ?? 0;
  const maximum = readCount(schema, 'maxItems', path) ?? Infinity;
  for (const [keyword, bound] of [
    ['minItems', minimum],
    ['maxItems', maximum],
  ] as const) {
    if (Number.isFinite(bound) && bound > ITEM_COUNT_LIMIT) {
      throw new GrammarCompileError(childPointer(path, keyword), `unsupported "${keyword}" above ${ITEM_COUNT_LIMIT}`);
    }
  }
  if (minimum > maximum) throw new GrammarCompileError(path, '"minItems" exceeds "maxItems"; no array is valid');
  return { minimum, maximum };
}

/** `{m,n}`-style quantifier for the elements after the first. */
function laterItemsQuantifier(bounds: ItemBounds): string {
  const lower = Math.max(bounds.minimum - 1, 0);
  if (!Number.isFinite(bounds.maximum)) return lower === 0 ? '*' : `{${lower},}`;
  return `{${lower},${bounds.maximum - 1}}`;
}

function arrayBody(item: string, bounds: ItemBounds, ws: string): string {
  if (bounds.maximum === 0) return `"[" ${ws} "]"`;
  const later = bounds.maximum === 1 ? '' : ` (${ws} "," ${ws} ${item})${laterItemsQuantifier(bounds)}`;
  const elements = `${item}${later} ${ws}`;
  return bounds.minimum === 0 ? `"[" ${ws} (${elements})? "]"` : `"[" ${ws} ${elements} "]"`;
}

/** The name of a rule matching the JSON arrays valid against an array-typed schema. */
export function compileArray(schema: SchemaObject, path: string, target: RuleTarget, compiler: NestedCompiler): string {
  const { registry } = compiler;
  const items = schema.items;
  if (Array.isArray(items))
    throw new GrammarCompileError(childPointer(path, 'items'), 'unsupported tuple form of "items"');
  const bounds = readBounds(schema, path);
  if (items === false) {
    // Only the empty array has no element to violate `false`.
    if (bounds.minimum > 0)
      throw new GrammarCompileError(path, '"items": false with "minItems" > 0; no array is valid');
    return registry.defineTarget(target, `"[" ${registry.primitive('ws')} "]"`);
  }
  if (items === undefined && bounds.minimum === 0 && bounds.maximum === Infinity)
    return registry.primitive('value-array');
  const item =
    items === undefined || items === true
      ? registry.primitive('value')
      : compiler.compileNested(items, childPointer(path, 'items'));
  return registry.defineTarget(target, arrayBody(item, bounds, registry.primitive('ws')));
}
