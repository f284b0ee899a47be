/**
 * Turns an untrusted JSON value into a typed request, or a 400 whose message names the field.
 * The JSON's bounds are checked first, iteratively (json-bounds.ts), so that no recursive code
 * ever sees absurd nesting and no check after them sees more than MAX_JSON_VALUES values.
 */
import type { z } from 'zod';
import { ServiceError } from './errors.js';
import { assertJsonBounds } from './json-bounds.js';
import { unservedToolType } from './tool-types.js';
import { unsupportedField } from './unsupported-fields.js';
import { countTokensRequest, messageRequest, type CountTokensRequest, type MessageRequest } from './request-schema.js';

/**
 * With `ignored` given (the config's `unknownFields: "ignore"`), a field the schema does not know
 * is dropped from `body` and its path (`messages.0.foo`) pushed onto `ignored`, for the reply
 * header that names it; without, it is a 400 naming the field.
 */
export function parseMessageRequest(body: unknown, ignored?: string[]): MessageRequest {
  return parseWith(messageRequest, body, ignored);
}

export function parseCountTokensRequest(body: unknown, ignored?: string[]): CountTokensRequest {
  return parseWith(countTokensRequest, body, ignored);
}

/** Rounds of dropping unknown fields before the request is refused anyway: each round parses again. */
const MOST_IGNORED_ROUNDS = 64;

/**
 * Zod's own switch (its `validate` sets it) to stop each array and object at its first failing
 * entry: a content array of 100,000 invalid items is then one issue, not 100,000 of them, each
 * with its path. The message names one issue anyway. `reportInput` keeps the value an issue is
 * about, so that a refused `type` is named in the message (describeIssue).
 */
const FIRST_ISSUE_ONLY: z.core.ParseContextInternal<z.core.$ZodIssue> = { abortEarly: true, reportInput: true };

function parseWith<Schema extends z.ZodType>(schema: Schema, body: unknown, ignored?: string[]): z.infer<Schema> {
  assertJsonBounds(body);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ServiceError('invalid_request', 'The request body must be a JSON object.');
  }
  const refused = unsupportedField(body) ?? unservedToolType(body);
  if (refused) throw new ServiceError('invalid_request', refused);
  for (let round = 0; ; round += 1) {
    const result = schema.safeParse(body, FIRST_ISSUE_ONLY);
    if (result.success) return result.data;
    const found = specificIssue(result.error.issues, []);
    const unknown = found?.issue.code === 'unrecognized_keys' ? found.issue : undefined;
    if (!ignored || !unknown || round === MOST_IGNORED_ROUNDS || !dropKeys(body, found!.path, unknown.keys))
      throw new ServiceError('invalid_request', describeIssue(result.error.issues));
    for (const key of unknown.keys) ignored.push([...found!.path, key].map(String).join('.'));
  }
}

/** Deletes the unknown keys an issue names from the object at its path; false if it is not there. */
function dropKeys(body: object, path: readonly PropertyKey[], keys: readonly string[]): boolean {
  let target: unknown = body;
  for (const key of path) target = (target as Record<PropertyKey, unknown> | null)?.[key];
  if (target === null || typeof target !== 'object') return false;
  for (const key of keys) delete (target as Record<string, unknown>)[key];
  return true;
}

/** Throws a 400 when `value` nests deeper than `maxDepth` containers; never recurses. */
export function assertJsonDepth(value: unknown, maxDepth: number): void {
  assertJsonBounds(value, { maxDepth, maxValues: Infinity });
}

type Issue = z.core.$ZodIssue;

/** The most specific issue, inside the union branch that got furthest, with its whole path. */
function specificIssue(
  issues: readonly Issue[],
  prefix: PropertyKey[],
): { issue: Issue; path: PropertyKey[] } | undefined {
  const issue = issues[0];
  if (!issue) return undefined;
  const path = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const branch = furthestBranch(issue.errors);
    if (branch) return specificIssue(branch, path);
  }
  return { issue, path };
}

/** One readable line for the most specific issue: `messages.0.role: Invalid option ...`. */
export function describeIssue(issues: readonly Issue[], prefix: PropertyKey[] = []): string {
  const found = specificIssue(issues, prefix);
  if (!found) return 'The request body is invalid.';
  const { issue, path } = found;
  if (issue.code === 'unrecognized_keys') {
    const field = [...path, issue.keys[0] ?? ''].map(String).join('.');
    return `${field}: Extra inputs are not permitted`;
  }
  const where = path.length > 0 ? path.map(String).join('.') : 'body';
  if (issue.code === 'invalid_union' && 'options' in issue && issue.options !== undefined && issue.options.length > 0)
    return `${where}: ${unknownDiscriminator(issue, issue.options)}`;
  if (issue.code === 'invalid_value') return `${where}: ${notAllowed(issue.values, issue.input)}`;
  return `${where}: ${issue.message}`;
}

/**
 * A `type` (or `role`) that no branch of a discriminated union takes, in this service's words
 * rather than the validation library's "Invalid discriminator value. Expected 'a' | 'null' | ..."
 * (issue 34): the value given, and the values taken, an unset one said as such.
 */
function unknownDiscriminator(issue: Extract<Issue, { code: 'invalid_union' }>, options: readonly unknown[]): string {
  const named = options
    .filter((option) => option !== null && option !== undefined)
    .map((option) => `"${String(option)}"`);
  const unset = named.length < options.length ? ' (or none)' : '';
  const input = issue.input as Record<string, unknown> | undefined;
  const value =
    issue.discriminator !== undefined && input !== null && typeof input === 'object'
      ? input[issue.discriminator]
      : undefined;
  const given = value === undefined ? 'none was given' : `${shown(value)} is not one of them`;
  return `must be one of ${named.join(', ')}${unset}; ${given}`;
}

/** A value outside a literal's or an enum's values, in the same words as a refused `type`. */
function notAllowed(values: readonly unknown[], input: unknown): string {
  const named = values.map((value) => (typeof value === 'string' ? `"${value}"` : String(value)));
  const expected = named.length === 1 ? `must be ${named[0]}` : `must be one of ${named.join(', ')}`;
  return input === undefined ? `${expected}; none was given` : `${expected}; ${shown(input)} is not`;
}

/** A refused value as a message names it: a string quoted (its first 100 characters), else its JSON type. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 100));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return Array.isArray(value) ? 'a list' : 'an object';
}

/**
 * Of a union's failed branches, the one that got furthest into the value explains the mistake
 * (a content array with one bad block, not "expected string"). Ties mean no branch fits at all.
 */
function furthestBranch(branches: readonly (readonly Issue[])[]): readonly Issue[] | undefined {
  let furthest: readonly Issue[] | undefined;
  let deepest = -1;
  let tied = false;
  for (const branch of branches) {
    const depth = deepestPath(branch);
    if (depth > deepest) [furthest, deepest, tied] = [branch, depth, false];
    else if (depth === deepest) tied = true;
  }
  return tied ? undefined : furthest;
}

/** A loop, not `Math.max(...)`: a spread passes every issue as an argument, and overflows the stack. */
function deepestPath(issues: readonly Issue[]): number {
  let deepest = -Infinity;
  for (const issue of issues) if (issue.path.length > deepest) deepest = issue.path.length;
  return deepest;
}
