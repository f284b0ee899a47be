/**
 * Invalid tool inputs for the scripted backend's fault injection: an object that looks like a
 * tool input but breaks one rule of the tool's schema. Deterministic, like the valid instances.
 */
import { canonicalJson } from '../../json-schema/canonical-json.js';
import { REFERENCE_KEYWORDS } from '../../json-schema/keyword-sets.js';
import { isSchemaObject, withoutKeywords } from '../../json-schema/schema-object.js';
import {
  BuildFailure,
  SchemaInstanceError,
  asSchema,
  declaredTypes,
  nonNegativeInteger,
  referenceOf,
  referenceTarget,
  schemaList,
  stringList,
  typesAllow,
  type JsonSchema,
  type SchemaObject,
} from './schema-references.js';
import { mergeSchemas } from './schema-merge.js';
import { compilePattern } from './schema-patterns.js';

type InstanceBuilder = (schema: JsonSchema) => unknown;

/** Enough to see through a chain of `$ref`s and `allOf`s at one location without looping on a cycle. */
const FLATTEN_STEPS = 16;

/** One value of each JSON type; a property rejects whichever its schema does not allow. */
const WRONG_VALUES: readonly unknown[] = ['wrong type', 12345, 1.5, true, null, [], {}];

export function violatingObjectFor(
  schema: JsonSchema,
  buildInstance: InstanceBuilder,
): Record<string, unknown> | undefined {
  const flat = flatten(schema, schema);
  if (flat === true) return undefined;
  const types = flat === false ? undefined : acceptedTypes(flat, schema);
  // Every object fails a false schema, or one whose types exclude objects.
  if (flat === false || (types !== undefined && !types.includes('object'))) return {};
  let valid: Record<string, unknown>;
  try {
    const instance = buildInstance(schema);
    valid = isSchemaObject(instance) ? instance : {};
  } catch (error) {
    if (!(error instanceof SchemaInstanceError)) throw error;
    // Nothing satisfies the schema, so any object violates it.
    return {};
  }
  return (
    withoutRequiredProperty(flat, valid) ??
    withForbiddenExtraProperty(flat, valid, schema) ??
    withWrongPropertyValue(flat, valid, schema) ??
    belowMinimumProperties(flat)
  );
}

/** Follows `$ref` and merges `allOf` at the top of `schema`, so the keywords that govern the object are visible. */
function flatten(schema: JsonSchema, root: JsonSchema): JsonSchema {
  let current = schema;
  for (let step = 0; step < FLATTEN_STEPS && isSchemaObject(current); step += 1) {
    const reference = referenceOf(current);
    if (reference !== undefined) {
      const target = resolveOrAccept(root, reference);
      current = mergeSchemas([target, withoutKeywords(current, REFERENCE_KEYWORDS)]);
    } else if (Array.isArray(current.allOf)) {
      current = mergeSchemas([withoutKeywords(current, ['allOf']), ...schemaList(current.allOf)]);
    } else {
      break;
    }
  }
  return current;
}

/** An unresolvable reference constrains nothing we can see, so it is read as `true`. */
function resolveOrAccept(root: JsonSchema, reference: string): JsonSchema {
  try {
    return referenceTarget(root, reference, '#').target;
  } catch (error) {
    if (!(error instanceof BuildFailure)) throw error;
    return true;
  }
}

function withoutRequiredProperty(
  schema: SchemaObject,
  valid: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const [missing] = stringList(schema.required);
  if (missing === undefined) return undefined;
  return Object.fromEntries(Object.entries(valid).filter(([name]) => name !== missing));
}

function withForbiddenExtraProperty(
  schema: SchemaObject,
  valid: Record<string, unknown>,
  root: JsonSchema,
): Record<string, unknown> | undefined {
  const name = unclaimedPropertyName(schema);
  if (name === undefined) return undefined;
  const additional = asSchema(schema.additionalProperties) ?? true;
  const value = additional === false ? 'unexpected' : wrongValueFor(additional, root);
  return value === undefined ? undefined : Object.fromEntries([...Object.entries(valid), [name, value]]);
}

/** A property name that neither `properties` nor `patternProperties` covers, so additionalProperties governs it. */
function unclaimedPropertyName(schema: SchemaObject): string | undefined {
  const properties = isSchemaObject(schema.properties) ? schema.properties : {};
  const patterns = Object.keys(isSchemaObject(schema.patternProperties) ? schema.patternProperties : {});
  const candidates = ['unexpected_property', 'unexpected-property-2', 'UNEXPECTED3', '~4'];
  return candidates.find(
    (name) =>
      !Object.hasOwn(properties, name) && !patterns.some((pattern) => compilePattern(pattern)?.test(name) === true),
  );
}

/** Required properties first, since an optional one's wrong value is easier for a lax validator to overlook. */
function withWrongPropertyValue(
  schema: SchemaObject,
  valid: Record<string, unknown>,
  root: JsonSchema,
): Record<string, unknown> | undefined {
  const properties = isSchemaObject(schema.properties) ? schema.properties : {};
  const names = [...new Set([...stringList(schema.required), ...Object.keys(properties)])];
  for (const name of names.filter((candidate) => Object.hasOwn(properties, candidate))) {
    const value = wrongValueFor(asSchema(properties[name]) ?? true, root);
    if (value !== undefined)
      return Object.fromEntries([...Object.entries(valid).filter(([key]) => key !== name), [name, value]]);
  }
  return undefined;
}

function belowMinimumProperties(schema: SchemaObject): Record<string, unknown> | undefined {
  return (nonNegativeInteger(schema.minProperties) ?? 0) > 0 ? {} : undefined;
}

/** A value the schema rejects by type, const or enum alone; undefined when those keywords do not narrow it. */
function wrongValueFor(schema: JsonSchema, root: JsonSchema): unknown {
  const flat = flatten(schema, root);
  if (flat === false) return 'unexpected';
  if (flat === true) return undefined;
  const types = acceptedTypes(flat, root);
  const wrongType = types === undefined ? undefined : WRONG_VALUES.find((value) => !typesAllow(types, value));
  if (wrongType !== undefined) return wrongType;
  const listed = 'const' in flat ? [flat.const] : Array.isArray(flat.enum) ? flat.enum : undefined;
  if (listed === undefined) return undefined;
  const allowed = new Set(listed.map(canonicalJson));
  return WRONG_VALUES.find((value) => !allowed.has(canonicalJson(value)));
}

/** The declared types, or for anyOf/oneOf the union of every branch's; undefined when some branch is untyped. */
function acceptedTypes(schema: SchemaObject, root: JsonSchema): string[] | undefined {
  const declared = declaredTypes(schema);
  if (declared !== undefined) return declared;
  const branches = schemaList(Array.isArray(schema.anyOf) ? schema.anyOf : schema.oneOf);
  if (branches.length === 0) return undefined;
  const perBranch = branches.map((branch) => {
    const flat = flatten(branch, root);
    return isSchemaObject(flat) ? declaredTypes(flat) : flat ? undefined : [];
  });
  return perBranch.every((types) => types !== undefined) ? perBranch.flat() : undefined;
}
