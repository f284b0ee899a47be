/**
 * The bad-input fuzz's drafts (bad-input-generator.ts): a request as its parts before it is written
 * as bytes, and the building blocks the mutation families (bad-input-body-families.ts,
 * bad-input-wire-families.ts) change one with.
 */
import { ATTACK_API_KEY } from './service-child.js';
import type { SeededRandom } from './seeded-random.js';
import type { ValidRequest } from './valid-requests.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Draft {
  method: string;
  path: string;
  version: string;
  headers: [string, string][];
  body: Buffer;
  /** content-length to send instead of the body's length, or null for none at all. */
  contentLength?: string | null;
  /** Raw text appended after the head instead of the body (chunked encodings). */
  rawBody?: Buffer;
  endAfterWrite?: boolean;
  replyOptional?: boolean;
}

/** Stands in a JSON value for text that JSON.stringify cannot write (1e999, deep nesting, bytes). */
const RAW_MARK = '\u0000raw:';

interface Mutated {
  mutation: string;
  draft: Draft;
}

export type Mutation = (random: SeededRandom, base: ValidRequest) => Mutated;

// --- building blocks -----------------------------------------------------------------------

export function clone(value: Record<string, unknown>): { [key: string]: Json } {
  return structuredClone(value) as { [key: string]: Json };
}

export function defaultDraft(base: ValidRequest, body: Buffer | string): Draft {
  return {
    method: 'POST',
    path: base.path,
    version: 'HTTP/1.1',
    headers: [
      ['host', '127.0.0.1'],
      ['x-api-key', ATTACK_API_KEY],
      ['anthropic-version', '2023-06-01'],
      ['content-type', 'application/json'],
    ],
    body: typeof body === 'string' ? Buffer.from(body) : body,
  };
}

interface Place {
  path: string;
  parent: { [key: string]: Json } | Json[];
  key: string | number;
}

/** Every value in the body, with where it is. */
export function places(root: { [key: string]: Json }): Place[] {
  const found: Place[] = [];
  const walk = (value: Json, path: string): void => {
    if (Array.isArray(value))
      value.forEach((item, index) => {
        found.push({ path: `${path}.${index}`, parent: value, key: index });
        walk(item, `${path}.${index}`);
      });
    else if (value !== null && typeof value === 'object')
      for (const [key, item] of Object.entries(value)) {
        found.push({ path: path === '' ? key : `${path}.${key}`, parent: value, key });
        walk(item, path === '' ? key : `${path}.${key}`);
      }
  };
  walk(root, '');
  return found;
}

export function objects(root: { [key: string]: Json }): { path: string; value: { [key: string]: Json } }[] {
  const found = [{ path: '(body)', value: root }];
  for (const place of places(root)) {
    const value = (place.parent as Record<string | number, Json>)[place.key];
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) found.push({ path: place.path, value });
  }
  return found;
}

export function setAt(place: Place, value: Json): void {
  (place.parent as Record<string | number, Json>)[place.key] = value;
}

/** The body as bytes, each raw mark replaced by its text. */
export function serialize(body: Json, raws: readonly (string | Buffer)[] = []): Buffer {
  const text = JSON.stringify(body);
  if (raws.length === 0) return Buffer.from(text);
  const parts: Buffer[] = [];
  const marker = /"\\u0000raw:(\d+)"/g;
  let last = 0;
  for (const found of text.matchAll(marker)) {
    parts.push(Buffer.from(text.slice(last, found.index)));
    const raw = raws[Number(found[1])]!;
    parts.push(typeof raw === 'string' ? Buffer.from(raw) : raw);
    last = found.index + found[0].length;
  }
  parts.push(Buffer.from(text.slice(last)));
  return Buffer.concat(parts);
}

export function short(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 40)}... (${text.length} chars)` : text;
}

export function nested(kind: 'array' | 'object', depth: number): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

export function bodyMutation(
  describe: string,
  change: (random: SeededRandom, body: { [key: string]: Json }, raws: (string | Buffer)[]) => string,
): Mutation {
  return (random, base) => {
    const body = clone(base.body);
    const raws: (string | Buffer)[] = [];
    const what = change(random, body, raws);
    return { mutation: `${describe}: ${what}`, draft: defaultDraft(base, serialize(body, raws)) };
  };
}

export function rawMark(raws: (string | Buffer)[], raw: string | Buffer): string {
  raws.push(raw);
  return `${RAW_MARK}${raws.length - 1}`;
}

/** One family of mutations, picked by weight. */
export interface Family {
  name: string;
  weight: number;
  mutate: Mutation;
}
