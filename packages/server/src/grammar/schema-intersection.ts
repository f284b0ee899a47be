/**
 * Two schemas that must both hold, as one schema the compiler can turn into grammar. JSON Schema
 * lets `$ref` and `anyOf` sit beside other keywords (`{"type": "object", "anyOf": [...]}`), and
 * every keyword of a schema applies, so the value must satisfy the siblings AND the reference
 * target (or AND one branch). The grammar has no intersection, so it is computed on the schemas:
 *
 *   - a `$ref` is replaced by its target (only while it is intersected: a lone `$ref` stays a
 *     named rule, which is how recursion compiles);
 *   - `anyOf` distributes: S and anyOf(B1..Bn) is anyOf(S and B1, .., S and Bn); a branch that
 *     cannot hold is dropped;
 *   - plain keywords merge by their meaning: types intersect (integer within number), enum/const
 *     values intersect, `required` unites, each property takes both sides' schema for it (the
 *     other side's `additionalProperties` where that side does not declare it), item schemas
 *     intersect, the tighter item bounds win.
 *
 * The result accepts exactly the values both accept, or fewer where the compiler narrows anyway
 * (absent `additionalProperties` beside `properties`). What cannot be merged faithfully throws
 * GrammarCompileError naming the place: enum/const beside object or array keywords (it would
 * need each value checked against them), two different patterns, and a `$ref` that would be
 * inlined into itself.
 */
import { canonicalJson, intersectValues } from '../json-schema/canonical-json.js';
import { childPointer } from '../json-schema/json-pointer.js';
import { commonTypes, valueHasType, type JsonType } from '../json-schema/json-types.js';
import { isSchemaObject, withoutKeywords, type SchemaObject } from '../json-schema/schema-object.js';
import type { CompileMode } from './compile-mode.js';
import { listedLiterals } from './literal-values.js';
import {
  GrammarCompileError,
  constrainingKeywords,
  readSchemaMap,
  readStringList,
  readTypes,
  referenceTarget,
} from './schema-reading.js';

/** The result of an intersection: `false` when no value satisfies both. */
export type Schema = boolean | SchemaObject;

const OBJECT_KEYWORDS = ['properties', 'required', 'additionalProperties'];
const ARRAY_KEYWORDS = ['items', 'minItems', 'maxItems'];
/** Bounds where the larger value is the tighter one, and where the smaller is. */
const LOWER_BOUNDS = ['minLength', 'minimum', 'exclusiveMinimum'];
const UPPER_BOUNDS = ['maxLength', 'maximum', 'exclusiveMaximum'];

export class SchemaIntersection {
  /** Pointers being inlined on the current path: meeting one again would inline forever. */
  private readonly inlining = new Set<string>();

  constructor(
    private readonly document: unknown,
    /** Reads each schema as the compile does: refusing or leaving out what it does not compile. */
    private readonly mode: CompileMode,
  ) {}

  /**
   * `schema` with its `$ref` and `anyOf` intersected with their siblings: a lone `anyOf` of
   * merged branches, a plain schema, or `false`.
   */
  withoutSiblings(schema: SchemaObject, path: string): Schema {
    const combinator = Object.hasOwn(schema, '$ref') ? '$ref' : 'anyOf';
    return this.of(withoutKeywords(schema, [combinator]), { [combinator]: schema[combinator] }, path);
  }

  /** A schema accepting the values that both `left` and `right` accept. */
  of(left: unknown, right: unknown, path: string): Schema {
    if (left === false || right === false) return false;
    if (isUnconstrained(left)) return this.checked(right, path);
    if (isUnconstrained(right)) return this.checked(left, path);
    const leftSchema = this.checked(left, path) as SchemaObject;
    const rightSchema = this.checked(right, path) as SchemaObject;
    if (canonicalJson(leftSchema) === canonicalJson(rightSchema)) return leftSchema;
    if (Object.hasOwn(leftSchema, '$ref')) return this.inlined(leftSchema, rightSchema, path);
    if (Object.hasOwn(rightSchema, '$ref')) return this.inlined(rightSchema, leftSchema, path);
    if (Object.hasOwn(leftSchema, 'anyOf')) return this.distributed(leftSchema, rightSchema, path);
    if (Object.hasOwn(rightSchema, 'anyOf')) return this.distributed(rightSchema, leftSchema, path);
    return this.merged(leftSchema, rightSchema, path);
  }

  private checked(schema: unknown, path: string): Schema {
    if (typeof schema === 'boolean') return schema;
    if (!isSchemaObject(schema)) throw new GrammarCompileError(path, 'malformed schema (not an object or boolean)');
    return this.mode.readable(schema, path);
  }

  private inlined(withReference: SchemaObject, other: SchemaObject, path: string): Schema {
    const { target, pointer } = referenceTarget(this.document, withReference, path);
    if (this.inlining.has(pointer)) {
      throw new GrammarCompileError(
        childPointer(path, '$ref'),
        `unsupported recursive "$ref" ${JSON.stringify(withReference.$ref)} beside other keywords`,
      );
    }
    this.inlining.add(pointer);
    try {
      return this.of(this.of(withoutKeywords(withReference, ['$ref']), target, path), other, path);
    } finally {
      this.inlining.delete(pointer);
    }
  }

  private distributed(withAnyOf: SchemaObject, other: SchemaObject, path: string): Schema {
    const branches = withAnyOf.anyOf;
    if (!Array.isArray(branches) || branches.length === 0) {
      throw new GrammarCompileError(childPointer(path, 'anyOf'), '"anyOf" must be a non-empty array of schemas');
    }
    const siblings = withoutKeywords(withAnyOf, ['anyOf']);
    const merged = branches
      .map((branch: unknown, index) => {
        const branchPath = childPointer(path, 'anyOf', String(index));
        return this.of(this.of(siblings, branch, branchPath), other, branchPath);
      })
      .filter((branch) => branch !== false);
    if (merged.length === 0) return false;
    if (merged.includes(true)) return true;
    return merged.length === 1 ? (merged[0] as Schema) : { anyOf: merged };
  }

  /** Two schemas without `$ref` or `anyOf`, keyword by keyword. */
  private merged(left: SchemaObject, right: SchemaObject, path: string): Schema {
    const result: SchemaObject = {};
    const types = intersectTypes(readTypes(left, path), readTypes(right, path));
    if (types?.length === 0) return false;
    if (types !== undefined) result.type = types;
    const literals = intersectLiterals(listedLiterals(left, path), listedLiterals(right, path));
    if (literals !== undefined) {
      const typed = literals.filter((value) => types === undefined || types.some((type) => valueHasType(value, type)));
      if (typed.length === 0) return false;
      const structural = [...OBJECT_KEYWORDS, ...ARRAY_KEYWORDS, ...LOWER_BOUNDS, ...UPPER_BOUNDS, 'pattern'].find(
        (keyword) => Object.hasOwn(left, keyword) || Object.hasOwn(right, keyword),
      );
      if (structural !== undefined)
        throw new GrammarCompileError(
          childPointer(path, structural),
          `unsupported "${structural}" beside "enum"/"const"`,
        );
      result.enum = typed;
      return result;
    }
    if (OBJECT_KEYWORDS.some((keyword) => Object.hasOwn(left, keyword) || Object.hasOwn(right, keyword))) {
      Object.assign(result, this.mergedObject(left, right, path));
    }
    if (ARRAY_KEYWORDS.some((keyword) => Object.hasOwn(left, keyword) || Object.hasOwn(right, keyword))) {
      Object.assign(result, this.mergedArray(left, right, path));
    }
    Object.assign(result, mergedScalarBounds(left, right, path));
    return result;
  }

  private mergedObject(left: SchemaObject, right: SchemaObject, path: string): SchemaObject {
    const leftProperties = new Map(readSchemaMap(left, 'properties', path));
    const rightProperties = new Map(readSchemaMap(right, 'properties', path));
    // An undeclared name falls under that side's additionalProperties, which absent means any value.
    const leftExtra = left.additionalProperties;
    const rightExtra = right.additionalProperties;
    const result: SchemaObject = {};
    if (Object.hasOwn(left, 'properties') || Object.hasOwn(right, 'properties')) {
      const names = new Set([...leftProperties.keys(), ...rightProperties.keys()]);
      const properties: SchemaObject = {};
      for (const name of names) {
        const leftSchema = leftProperties.has(name) ? leftProperties.get(name) : (leftExtra ?? true);
        const rightSchema = rightProperties.has(name) ? rightProperties.get(name) : (rightExtra ?? true);
        properties[name] = this.of(leftSchema, rightSchema, childPointer(path, 'properties', name));
      }
      result.properties = properties;
    }
    const required = [
      ...new Set([...readStringList(left, 'required', path), ...readStringList(right, 'required', path)]),
    ];
    if (required.length > 0) result.required = required;
    if (leftExtra !== undefined || rightExtra !== undefined) {
      result.additionalProperties = this.of(
        leftExtra ?? true,
        rightExtra ?? true,
        childPointer(path, 'additionalProperties'),
      );
    }
    return result;
  }

  private mergedArray(left: SchemaObject, right: SchemaObject, path: string): SchemaObject {
    const result: SchemaObject = {};
    for (const side of [left, right]) {
      if (Array.isArray(side.items))
        throw new GrammarCompileError(childPointer(path, 'items'), 'unsupported tuple form of "items"');
    }
    if (left.items !== undefined || right.items !== undefined)
      result.items = this.of(left.items ?? true, right.items ?? true, childPointer(path, 'items'));
    const minimums = [left.minItems, right.minItems].filter((bound) => bound !== undefined);
    const maximums = [left.maxItems, right.maxItems].filter((bound) => bound !== undefined);
    // Malformed bounds are refused when the merged schema compiles (readCount names them).
    if (minimums.length > 0)
      result.minItems = minimums.every((bound) => typeof bound === 'number')
        ? Math.max(...(minimums as number[]))
        : minimums[0];
    if (maximums.length > 0)
      result.maxItems = maximums.every((bound) => typeof bound === 'number')
        ? Math.min(...(maximums as number[]))
        : maximums[0];
    return result;
  }
}

/**
 * String lengths, number bounds and `pattern` of both sides: the tighter bound of each keyword
 * (malformed ones are kept for the compile to refuse, naming them); two different patterns would
 * need their intersection, which is not compiled.
 */
function mergedScalarBounds(left: SchemaObject, right: SchemaObject, path: string): SchemaObject {
  const result: SchemaObject = {};
  for (const keyword of [...LOWER_BOUNDS, ...UPPER_BOUNDS]) {
    const bounds = [left[keyword], right[keyword]].filter((bound) => bound !== undefined);
    if (bounds.length === 0) continue;
    const numeric = bounds.every((bound) => typeof bound === 'number');
    const tighter = LOWER_BOUNDS.includes(keyword) ? Math.max : Math.min;
    result[keyword] = numeric ? tighter(...(bounds as number[])) : bounds[0];
  }
  const patterns = [...new Set([left.pattern, right.pattern].filter((pattern) => pattern !== undefined))];
  if (patterns.length > 1)
    throw new GrammarCompileError(
      childPointer(path, 'pattern'),
      'unsupported "pattern" on both sides of an intersection',
    );
  if (patterns.length === 1) result.pattern = patterns[0];
  return result;
}

function isUnconstrained(schema: unknown): boolean {
  return schema === true || (isSchemaObject(schema) && constrainingKeywords(schema).length === 0);
}

/** Declared types in common, integer being a number; undefined when neither side declares any. */
function intersectTypes(left: JsonType[] | undefined, right: JsonType[] | undefined): JsonType[] | undefined {
  if (left === undefined) return right;
  if (right === undefined) return left;
  return commonTypes(left, right);
}

function intersectLiterals(left: unknown[] | undefined, right: unknown[] | undefined): unknown[] | undefined {
  if (left === undefined) return right;
  if (right === undefined) return left;
  return intersectValues(left, right);
}
