/**
 * Turns an untrusted JSON value into a typed request, or a 400 whose message names the field.
 * Depth is checked first, iteratively, so that no recursive code ever sees absurd nesting.
 */
import type { z } from 'zod';
import { MAX_JSON_DEPTH } from './constants.js';
import { ServiceError } from './errors.js';
import { countTokensRequest, messageRequest, type CountTokensRequest, type MessageRequest } from './request-schema.js';

export function parseMessageRequest(body: unknown): MessageRequest {
  return parseWith(messageRequest, body);
}

export function parseCountTokensRequest(body: unknown): CountTokensRequest {
  return parseWith(countTokensRequest, body);
}

function parseWith<Schema extends z.ZodType>(schema: Schema, body: unknown): z.infer<Schema> {
  assertJsonDepth(body, MAX_JSON_DEPTH);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ServiceError('invalid_request', 'The request body must be a JSON object.');
  }
  const result = schema.safeParse(body);
  if (!result.success) throw new ServiceError('invalid_request', describeIssue(result.error.issues));
  return result.data;
}

/**
 * Throws a 400 when `value` nests deeper than `maxDepth` containers; never recurses. Only
 * containers go on the stack, in two parallel arrays: every request passes through here, and
 * an object per value was a third of the cost of validating a small one.
 */
export function assertJsonDepth(value: unknown, maxDepth: number): void {
  if (value === null || typeof value !== 'object') return;
  const containers: object[] = [value];
  const depths: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) {
      throw new ServiceError('invalid_request', `The request body nests deeper than ${maxDepth} levels.`);
    }
    for (const child of Array.isArray(container) ? container : Object.values(container)) {
      if (child !== null && typeof child === 'object') {
        containers.push(child as object);
        depths.push(depth + 1);
      }
    }
  }
}

type Issue = z.core.$ZodIssue;

/** One readable line for the most specific issue: `messages.0.role: Invalid option ...`. */
export function describeIssue(issues: readonly Issue[], prefix: PropertyKey[] = []): string {
  const issue = issues[0];
  if (!issue) return 'The request body is invalid.';
  const path = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const branch = furthestBranch(issue.errors);
    if (branch) return describeIssue(branch, path);
  }
  if (issue.code === 'unrecognized_keys') {
    const field = [...path, issue.keys[0] ?? ''].map(String).join('.');
    return `${field}: Extra inputs are not permitted`;
  }
  const where = path.length > 0 ? path.map(String).join('.') : 'body';
  return `${where}: ${issue.message}`;
}

/**
 * Of a union's failed branches, the one that got furthest into the value explains the mistake
 * (a content array with one bad block, not "expected string"). Ties mean no branch fits at all.
 */
function furthestBranch(branches: readonly (readonly Issue[])[]): readonly Issue[] | undefined {
  const depths = branches.map((branch) => Math.max(...branch.map((issue) => issue.path.length)));
  const deepest = Math.max(...depths);
  if (depths.filter((depth) => depth === deepest).length > 1) return undefined;
  return branches[depths.indexOf(deepest)];
}
