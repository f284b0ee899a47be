/**
 * The `Insufficient data` escape inside a forced strict tool (spec, Research conventions: "Allow
 * the explicit answer `Insufficient data`"; docs/decisions/0010). A forced tool cannot be
 * answered with text, so the escape lives in the tool's input: the caller's schema becomes one
 * branch of `answer`, the string `Insufficient data` the other. The client unwraps `answer`
 * before validating against the caller's schema, so callers never see the envelope.
 */
import { INSUFFICIENT_DATA, isInsufficientData } from '../prompts.js';
import { isPlainObject, mapSubschemas, toStrictSchema, type JsonSchema } from '../strict-schema.js';

export const ANSWER_FIELD = 'answer';

/** Where the caller's schema sits in the envelope, as a JSON pointer fragment. */
const ANSWER_POINTER = `#/properties/${ANSWER_FIELD}/anyOf/0`;
/** Definitions move to the envelope's root, so `#/$defs/...` references keep pointing at them. */
const DEFINITION_KEYWORDS = ['$defs', 'definitions'] as const;

/** The tool's `input_schema` as sent: the caller's schema made strict, inside the envelope when it is on. */
export function toolInputSchema(schema: JsonSchema, envelope: boolean): JsonSchema {
  const strict = toStrictSchema(schema);
  return envelope ? wrapAnswerSchema(strict) : strict;
}

/** `{answer: <strict schema> | "Insufficient data"}`, every required, nothing else allowed. */
export function wrapAnswerSchema(strict: JsonSchema): JsonSchema {
  const answer = rebase(strict) as JsonSchema;
  const definitions: JsonSchema = {};
  for (const keyword of DEFINITION_KEYWORDS) {
    if (answer[keyword] === undefined) continue;
    definitions[keyword] = answer[keyword];
    delete answer[keyword];
  }
  const escape = {
    type: 'string',
    enum: [INSUFFICIENT_DATA],
    description: 'Only when the data does not support an answer.',
  };
  return {
    type: 'object',
    properties: { [ANSWER_FIELD]: { anyOf: [answer, escape] } },
    required: [ANSWER_FIELD],
    additionalProperties: false,
    ...definitions,
  };
}

export type EnvelopeReading =
  | { kind: 'answer'; value: unknown }
  | { kind: 'insufficient_data'; text: string }
  | { kind: 'malformed'; violation: string };

/**
 * The answer inside the tool input the model wrote. The input is whatever JSON the model sent
 * (`null`, a string...), so anything but an object is malformed with the violation the schema
 * check gives without the envelope.
 */
export function readAnswerEnvelope(input: unknown): EnvelopeReading {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    return { kind: 'malformed', violation: '/ must be object' };
  const keys = Object.keys(input);
  if (keys.length !== 1 || keys[0] !== ANSWER_FIELD) {
    return {
      kind: 'malformed',
      violation: `/ must have exactly one property, "${ANSWER_FIELD}" (got ${keys.length === 0 ? 'none' : keys.map((key) => JSON.stringify(key)).join(', ')})`,
    };
  }
  const value = (input as Record<string, unknown>)[ANSWER_FIELD];
  if (typeof value === 'string' && isInsufficientData(value)) return { kind: 'insufficient_data', text: value };
  return { kind: 'answer', value };
}

/** A violation of the unwrapped answer (`/name must ...`), as a path in the tool input the model wrote. */
export function inEnvelope(violation: string): string {
  if (violation.startsWith('/ ')) return `/${ANSWER_FIELD}${violation.slice(1)}`;
  return violation.startsWith('/') ? `/${ANSWER_FIELD}${violation}` : violation;
}

/**
 * Same-document references other than to definitions now point into the envelope. Walks only
 * what holds subschemas (mapSubschemas), so data in `enum` or `const` and property names stay.
 */
function rebase(node: unknown): unknown {
  if (!isPlainObject(node)) return node;
  const rebased = mapSubschemas(node, rebase);
  return typeof rebased.$ref === 'string' ? { ...rebased, $ref: rebasedReference(rebased.$ref) } : rebased;
}

function rebasedReference(reference: string): string {
  if (!reference.startsWith('#')) return reference;
  if (DEFINITION_KEYWORDS.some((keyword) => reference === `#/${keyword}` || reference.startsWith(`#/${keyword}/`)))
    return reference;
  return `${ANSWER_POINTER}${reference.slice(1)}`;
}
