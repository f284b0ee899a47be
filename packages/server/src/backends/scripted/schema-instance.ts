/**
 * Deterministic JSON Schema instances for the scripted backend: a valid tool input for a forced
 * tool call, and an invalid one for fault injection. Same schema, same output; no randomness.
 *
 * Recursion ends because a `$ref` may not re-enter a target it is already expanding (see
 * `buildReference`): the branch that tries fails, so `anyOf` moves to its next branch and arrays
 * fall back to their minimum length. Only when nothing else works is one more level allowed.
 */
import { canonicalJson, intersectValues } from '../../json-schema/canonical-json.js';
import { REFERENCE_KEYWORDS } from '../../json-schema/keyword-sets.js';
import { isSchemaObject, withoutKeywords } from '../../json-schema/schema-object.js';
import {
  BuildFailure,
  asSchema,
  declaredTypes,
  hasConstraints,
  inferredType,
  itemLayout,
  nonNegativeInteger,
  propertySchema,
  referenceOf,
  referenceTarget,
  schemaList,
  stringList,
  typesAllow,
  type ItemLayout,
  type JsonSchema,
  type SchemaObject,
} from './schema-references.js';
import { mergeSchemas } from './schema-merge.js';
import { exampleNumber, exampleString } from './schema-scalars.js';
import { violatingObjectFor } from './schema-violations.js';

export { SchemaInstanceError, type JsonSchema } from './schema-references.js';

/** Deeper than any real tool schema, shallow enough that the call stack never runs out. */
const MAXIMUM_DEPTH = 128;
/** How often a `$ref` may re-enter itself, tried in order until one suffices: fewest first. */
const REENTRY_LIMITS = [0, 1, 2, 4];
/** Schema nodes visited per call, over all attempts: anyOf backtracking can grow exponentially, so it is capped. */
const WORK_BUDGET = 20_000;

interface BuildState {
  readonly root: JsonSchema;
  readonly reentryLimit: number;
  /** Shared by every attempt of one exampleInstance call. */
  readonly budget: { remaining: number };
  /** `$ref` targets and their pointers by reference text; backtracking resolves the same few references over and over. */
  readonly resolved: Map<string, { target: JsonSchema; pointer: string }>;
  /** Set when a `$ref` was refused, so a failed build knows a higher limit might succeed. */
  recursionRefused: boolean;
}

interface BuildContext {
  readonly state: BuildState;
  readonly path: string;
  readonly depth: number;
  /** `$ref` targets being expanded on the way to here, outermost first. */
  readonly activeTargets: readonly SchemaObject[];
  readonly propertyName: string | undefined;
  readonly variant: number;
  /** True until the builder descends into a property or item; a bare root schema means an object. */
  readonly atInstanceRoot: boolean;
}

/** A deterministic instance valid against `schema`; throws SchemaInstanceError when it cannot build one. */
export function exampleInstance(schema: JsonSchema): unknown {
  let lastFailure: BuildFailure | undefined;
  const budget = { remaining: WORK_BUDGET };
  const resolved = new Map<string, { target: JsonSchema; pointer: string }>();
  for (const reentryLimit of REENTRY_LIMITS) {
    const state: BuildState = { root: schema, reentryLimit, budget, resolved, recursionRefused: false };
    try {
      return build(schema, rootContext(state));
    } catch (error) {
      if (!(error instanceof BuildFailure)) throw error;
      lastFailure = error;
      if (!state.recursionRefused || budget.remaining <= 0) break;
    }
  }
  const exhausted =
    budget.remaining < 0 ? new BuildFailure('#', `gave up after visiting ${WORK_BUDGET} schema nodes`) : undefined;
  throw (exhausted ?? lastFailure ?? new BuildFailure('#', 'no instance could be built')).toError();
}

/**
 * An object a tool_use input could carry that fails `schema`: a required property missing, an
 * extra property where additionalProperties forbids it, or a property of the wrong type.
 * Undefined when the schema accepts every object.
 */
export function violatingObject(schema: JsonSchema): Record<string, unknown> | undefined {
  return violatingObjectFor(schema, exampleInstance);
}

function rootContext(state: BuildState): BuildContext {
  const activeTargets = isSchemaObject(state.root) ? [state.root] : [];
  return { state, path: '#', depth: 0, activeTargets, propertyName: undefined, variant: 0, atInstanceRoot: true };
}

/** The same instance location, seen through a combinator or reference. */
function withinSchema(context: BuildContext, path: string): BuildContext {
  return { ...context, path, depth: context.depth + 1 };
}

/** A child value: a property or an array item. */
function intoInstance(
  context: BuildContext,
  path: string,
  propertyName: string | undefined,
  variant: number,
): BuildContext {
  return { ...context, path, depth: context.depth + 1, propertyName, variant, atInstanceRoot: false };
}

function chargeWork(context: BuildContext): void {
  if (context.depth > MAXIMUM_DEPTH) {
    throw new BuildFailure(context.path, `schema nests deeper than ${MAXIMUM_DEPTH} levels`);
  }
  context.state.budget.remaining -= 1;
  // Once spent, every visit fails at once, so the backtracking still under way unwinds quickly.
  if (context.state.budget.remaining < 0) {
    throw new BuildFailure(context.path, `gave up after visiting ${WORK_BUDGET} schema nodes`);
  }
}

/** Each value built visits a schema node at least once: more values than the budget cannot be built. */
function assertWithinBudget(values: number, keyword: string, context: BuildContext): void {
  if (values > WORK_BUDGET)
    throw new BuildFailure(
      context.path,
      `${keyword} ${values} asks for more than the ${WORK_BUDGET} values the scripted backend builds`,
    );
}

function build(schema: JsonSchema, context: BuildContext): unknown {
  chargeWork(context);
  if (schema === false) throw new BuildFailure(context.path, 'the schema is false, so no value is valid');
  if (schema === true) return buildValue({}, context);
  const reference = referenceOf(schema);
  if (reference !== undefined) return buildReference(schema, reference, context);
  if (Array.isArray(schema.allOf)) {
    const merged = mergeSchemas([withoutKeywords(schema, ['allOf']), ...schemaList(schema.allOf)]);
    return build(merged, withinSchema(context, `${context.path}/allOf`));
  }
  if (Array.isArray(schema.anyOf)) return buildFirstBranch(schema, 'anyOf', context);
  // oneOf is built like anyOf: the first buildable branch, without proving the others reject it.
  if (Array.isArray(schema.oneOf)) return buildFirstBranch(schema, 'oneOf', context);
  return buildValue(schema, context);
}

function buildReference(schema: SchemaObject, reference: string, context: BuildContext): unknown {
  const resolved =
    context.state.resolved.get(reference) ?? referenceTarget(context.state.root, reference, context.path);
  context.state.resolved.set(reference, resolved);
  const { target, pointer } = resolved;
  const siblings = withoutKeywords(schema, REFERENCE_KEYWORDS);
  if (typeof target === 'boolean') return build(mergeSchemas([target, siblings]), withinSchema(context, pointer));
  const entries = context.activeTargets.filter((active) => active === target).length;
  if (entries > context.state.reentryLimit) {
    context.state.recursionRefused = true;
    throw new BuildFailure(context.path, `recursion through $ref "${reference}" stopped`);
  }
  const next = { ...context, activeTargets: [...context.activeTargets, target] };
  if (!hasConstraints(siblings)) return build(target, withinSchema(next, pointer));
  return build(mergeSchemas([target, siblings]), withinSchema(next, `${context.path}/$ref`));
}

function buildFirstBranch(schema: SchemaObject, keyword: 'anyOf' | 'oneOf', context: BuildContext): unknown {
  const rest = withoutKeywords(schema, [keyword]);
  let firstError: BuildFailure | undefined;
  for (const [index, branch] of schemaList(schema[keyword]).entries()) {
    try {
      return build(mergeSchemas([rest, branch]), withinSchema(context, `${context.path}/${keyword}/${index}`));
    } catch (error) {
      if (!(error instanceof BuildFailure)) throw error;
      firstError ??= error;
    }
  }
  throw new BuildFailure(`${context.path}/${keyword}`, `no ${keyword} branch can be built`, firstError);
}

function buildValue(schema: SchemaObject, context: BuildContext): unknown {
  const types = declaredTypes(schema);
  const listed = listedValues(schema);
  if (listed !== undefined) return pickListedValue(listed, types, context);
  const fitsTypes = types === undefined || typesAllow(types, schema.default);
  if (context.variant === 0 && 'default' in schema && fitsTypes) return schema.default;
  const fallback = context.atInstanceRoot ? 'object' : 'string';
  return buildFirstType(schema, types ?? [inferredType(schema) ?? fallback], context);
}

/** The values `const` and `enum` allow together, or undefined when neither is present. */
function listedValues(schema: SchemaObject): unknown[] | undefined {
  const enumerated = Array.isArray(schema.enum) ? schema.enum : undefined;
  if (!('const' in schema)) return enumerated;
  const allowed = enumerated === undefined || intersectValues(enumerated, [schema.const]).length > 0;
  return allowed ? [schema.const] : [];
}

function pickListedValue(
  values: readonly unknown[],
  types: readonly string[] | undefined,
  context: BuildContext,
): unknown {
  const allowed = types === undefined ? values : values.filter((value) => typesAllow(types, value));
  if (allowed.length === 0) throw new BuildFailure(context.path, 'no const or enum value fits the schema');
  return allowed[context.variant % allowed.length];
}

function buildFirstType(schema: SchemaObject, types: readonly string[], context: BuildContext): unknown {
  let firstError: BuildFailure | undefined;
  for (const type of types) {
    try {
      return buildOfType(schema, type, context);
    } catch (error) {
      if (!(error instanceof BuildFailure)) throw error;
      firstError ??= error;
    }
  }
  throw firstError ?? new BuildFailure(context.path, 'no type is allowed (the types conflict)');
}

function buildOfType(schema: SchemaObject, type: string, context: BuildContext): unknown {
  const hints = { path: context.path, propertyName: context.propertyName, variant: context.variant };
  switch (type) {
    case 'object':
      return buildObject(schema, context);
    case 'array':
      return buildArray(schema, context);
    case 'string':
      return exampleString(schema, hints);
    case 'integer':
    case 'number':
      return exampleNumber(schema, type === 'integer', hints);
    case 'boolean':
      return context.variant % 2 === 0;
    case 'null':
      return null;
    default:
      throw new BuildFailure(context.path, `unknown type "${type}"`);
  }
}

/** Only required properties, plus optional ones where minProperties asks for more. */
function buildObject(schema: SchemaObject, context: BuildContext): Record<string, unknown> {
  const entries: Array<[string, unknown]> = [];
  for (const name of new Set(stringList(schema.required))) entries.push([name, buildProperty(schema, name, context)]);
  const minimum = nonNegativeInteger(schema.minProperties) ?? 0;
  assertWithinBudget(minimum, 'minProperties', context);
  if (entries.length < minimum) entries.push(...extraProperties(schema, entries, minimum - entries.length, context));
  const maximum = nonNegativeInteger(schema.maxProperties);
  if (maximum !== undefined && entries.length > maximum) {
    throw new BuildFailure(context.path, `${entries.length} required properties exceed maxProperties ${maximum}`);
  }
  // fromEntries makes "__proto__" an own property instead of a prototype change.
  return Object.fromEntries(entries);
}

function buildProperty(schema: SchemaObject, name: string, context: BuildContext): unknown {
  const { subschema, path } = propertySchema(schema, name, context.path);
  return build(subschema, intoInstance(context, path, name, context.variant));
}

/** Optional properties first, in declaration order, then invented names where additionalProperties allows them. */
function extraProperties(
  schema: SchemaObject,
  taken: ReadonlyArray<[string, unknown]>,
  count: number,
  context: BuildContext,
): Array<[string, unknown]> {
  const used = new Set(taken.map(([name]) => name));
  const declared = Object.keys(isSchemaObject(schema.properties) ? schema.properties : {});
  const invented =
    schema.additionalProperties === false
      ? []
      : Array.from({ length: count + used.size }, (_, index) => `property${index + 1}`);
  const added: Array<[string, unknown]> = [];
  for (const name of [...declared, ...invented]) {
    if (added.length === count) break;
    if (used.has(name)) continue;
    used.add(name);
    try {
      added.push([name, buildProperty(schema, name, context)]);
    } catch (error) {
      // Once the budget is spent every name fails at once: trying the rest, a failure each,
      // held the event loop 420 ms for `minProperties: 100000` (found by the attack fuzz).
      if (!(error instanceof BuildFailure) || context.state.budget.remaining < 0) throw error;
    }
  }
  if (added.length < count) throw new BuildFailure(context.path, 'cannot build enough properties for minProperties');
  return added;
}

/** One item (or the whole tuple) reads as a plausible example; the minimum is the fallback that always terminates. */
function buildArray(schema: SchemaObject, context: BuildContext): unknown[] {
  const layout = itemLayout(schema);
  const minimum = Math.max(nonNegativeInteger(schema.minItems) ?? 0, layout.containing);
  const maximum = nonNegativeInteger(schema.maxItems) ?? Number.POSITIVE_INFINITY;
  if (minimum > maximum) throw new BuildFailure(context.path, `minItems ${minimum} exceeds maxItems ${maximum}`);
  assertWithinBudget(minimum, 'minItems', context);
  const preferred = Math.min(maximum, Math.max(minimum, layout.prefix.length, layout.rest === false ? 0 : 1));
  try {
    return buildItems(schema, layout, preferred, context);
  } catch (error) {
    if (!(error instanceof BuildFailure) || preferred === minimum) throw error;
    return buildItems(schema, layout, minimum, context);
  }
}

function buildItems(schema: SchemaObject, layout: ItemLayout, count: number, context: BuildContext): unknown[] {
  const items: unknown[] = [];
  for (let index = 0; index < count; index += 1) {
    const inPrefix = index < layout.prefix.length;
    const path = inPrefix
      ? `${context.path}/${layout.prefixKeyword}/${index}`
      : `${context.path}/${layout.restKeyword}`;
    const itemSchema = (inPrefix ? layout.prefix[index] : undefined) ?? layout.rest;
    const contains = asSchema(schema.contains) ?? true;
    const subschema = index < layout.containing ? mergeSchemas([itemSchema, contains]) : itemSchema;
    // Only uniqueItems needs items to differ; otherwise each keeps its schema's first choice (first enum value...).
    const variant = schema.uniqueItems === true ? context.variant * count + index : context.variant;
    items.push(build(subschema, intoInstance(context, path, context.propertyName, variant)));
  }
  const distinct = new Set(items.map(canonicalJson)).size === items.length;
  if (schema.uniqueItems === true && !distinct)
    throw new BuildFailure(context.path, 'cannot build distinct items for uniqueItems');
  return items;
}
