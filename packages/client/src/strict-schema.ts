/**
 * Strict schemas (spec: "Strict schema keywords"). `assertStrictSchema` is for users' test
 * suites ("schemas are checked in a test"); `toStrictSchema` turns any schema into one the
 * strict list accepts by writing the constraints it cannot express into `description`. The
 * client validates answers against the caller's original schema, so those constraints are
 * still enforced, on the answer, by the client.
 */
import { findSchemaProblem, STRICT_SCHEMA_KEYWORDS } from '@model-messages/protocol';

export type JsonSchema = Record<string, unknown>;

/** A schema that strict mode would refuse, naming the keyword and where it is. */
export class StrictSchemaError extends Error {
  readonly keyword: string | undefined;
  /** Path from the root, such as `properties.tags.items`; empty for the root. */
  readonly path: string;

  constructor(message: string, path: string, keyword: string | undefined) {
    super(message);
    this.name = 'StrictSchemaError';
    this.path = path;
    this.keyword = keyword;
  }
}

/** Throws StrictSchemaError unless `schema` is an object schema the strict keyword list accepts. */
export function assertStrictSchema(schema: unknown): asserts schema is JsonSchema {
  const problem = findSchemaProblem(schema, { strict: true });
  if (problem) {
    const where = problem.path === '' ? 'at the root' : `at ${problem.path}`;
    throw new StrictSchemaError(`strict schema ${where}: ${problem.message}`, problem.path, problem.keyword);
  }
  if ((schema as JsonSchema).type !== 'object') {
    throw new StrictSchemaError(
      'strict schema at the root: a tool input schema must have type "object"',
      '',
      undefined,
    );
  }
}

/** Keywords of the strict list whose value maps names to subschemas. */
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions']);
/** Annotations that constrain nothing: dropped rather than described. */
const DROPPED = new Set(['$schema', '$comment']);

/**
 * A copy of `node` with each subschema it holds directly replaced by `fn(subschema)`: the values
 * of `properties`, `$defs` and `definitions`, the members of `anyOf`, and `items` and
 * `additionalProperties`, the places the strict keyword list holds subschemas. Everything else
 * (data in `enum` or `const`, property names, a tuple `items` list) stays as it is.
 */
export function mapSubschemas(node: JsonSchema, fn: (subschema: unknown) => unknown): JsonSchema {
  return Object.fromEntries(
    Object.entries(node).map(([keyword, value]) => {
      if (SCHEMA_MAPS.has(keyword) && isPlainObject(value))
        return [keyword, Object.fromEntries(Object.entries(value).map(([name, child]) => [name, fn(child)]))];
      if (keyword === 'anyOf' && Array.isArray(value)) return [keyword, value.map(fn)];
      if ((keyword === 'items' || keyword === 'additionalProperties') && !Array.isArray(value))
        return [keyword, fn(value)];
      return [keyword, value];
    }),
  );
}

export function isPlainObject(value: unknown): value is JsonSchema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A copy of `schema` that strict mode accepts: `oneOf` becomes `anyOf`, and every other keyword
 * outside the strict list (maxLength, pattern, format, minimum, minItems, default...) moves into
 * the node's `description` as JSON, for the model to read. Throws StrictSchemaError when the
 * schema is not an object schema or breaks the size and depth caps.
 */
export function toStrictSchema(schema: JsonSchema): JsonSchema {
  const problem = findSchemaProblem(schema, { strict: false });
  if (problem)
    throw new StrictSchemaError(`schema at ${problem.path || 'the root'}: ${problem.message}`, problem.path, undefined);
  const strict = convertNode(schema) as JsonSchema;
  assertStrictSchema(strict);
  return strict;
}

/** Sorts the node's keywords into kept and described, then converts the subschemas it keeps. */
function convertNode(node: unknown): unknown {
  if (!isPlainObject(node)) return node;
  const kept: JsonSchema = {};
  const described: JsonSchema = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (DROPPED.has(keyword)) continue;
    if (keyword === 'oneOf' && Array.isArray(value) && node.anyOf === undefined) kept.anyOf = value;
    else if (keyword === 'items' && Array.isArray(value)) {
      // Tuple form (draft 7): no strict equivalent; describe it and let any item through.
      described.items = value;
      kept.items = {};
    } else if (!STRICT_SCHEMA_KEYWORDS.has(keyword)) described[keyword] = value;
    else kept[keyword] = value;
  }
  const result = mapSubschemas(kept, convertNode);
  if (Object.keys(described).length > 0) {
    const note = `Constraints: ${JSON.stringify(described)}`;
    result.description =
      typeof result.description === 'string' && result.description !== '' ? `${result.description} (${note})` : note;
  }
  return result;
}
