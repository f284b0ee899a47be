/**
 * The bad-input fuzz's requests: request `index` of `seed` is one valid request (valid-requests.ts)
 * with one mutation, a family picked by weight: the body's values (wrong types, odd numbers,
 * missing and extra fields, `__proto__` keys, duplicate keys, schema bombs), its size (deep
 * nesting, long strings, many items, up to just over the 32 MB limit), its bytes (bad JSON,
 * invalid UTF-8), its headers (content-type, anthropic-version, anthropic-beta, keys, odd
 * names), its framing (a content-length that lies, chunked bodies, methods, paths, versions), or
 * its conversation's shape (blocks of every type in every role and place, paused turns, calls and
 * results apart; issue 31). Every request is written as raw bytes with `connection: close`, so
 * that the service sees exactly what a hostile client would send.
 */
import { BODY_FAMILIES } from './bad-input-body-families.js';
import { CONVERSATION_FAMILIES } from './bad-input-conversation-shapes.js';
import type { Draft } from './bad-input-draft.js';
import { WIRE_FAMILIES } from './bad-input-wire-families.js';
import { SeededRandom } from './seeded-random.js';
import { VALID_REQUESTS } from './valid-requests.js';

export interface FuzzRequest {
  index: number;
  family: string;
  /** What was done, for the report: `odd value: max_tokens := 1e999`. */
  mutation: string;
  /** The whole request, head and body. */
  bytes: Buffer;
  /** Half-close after writing: the body is shorter than its content-length, or the head never ends. */
  endAfterWrite: boolean;
  /** The client gave up before the request was whole, so no reply is a fair answer. */
  replyOptional: boolean;
  /** A HEAD request: its reply has no body to check. */
  head: boolean;
}

/** Every family, in the order the seeded pick reads them. */
const FAMILIES = [...BODY_FAMILIES, ...WIRE_FAMILIES, ...CONVERSATION_FAMILIES];

const TOTAL_WEIGHT = FAMILIES.reduce((sum, family) => sum + family.weight, 0);

export const FAMILY_NAMES = FAMILIES.map((family) => family.name);

function pickFamily(random: SeededRandom): (typeof FAMILIES)[number] {
  let left = random.next() * TOTAL_WEIGHT;
  for (const family of FAMILIES) {
    left -= family.weight;
    if (left < 0) return family;
  }
  return FAMILIES.at(-1)!;
}

function requestBytes(draft: Draft): Buffer {
  const headers = [...draft.headers];
  const body = draft.rawBody ?? draft.body;
  if (draft.contentLength !== null) headers.push(['content-length', draft.contentLength ?? String(draft.body.length)]);
  headers.push(['connection', 'close']);
  const requestLine =
    draft.version === '' ? `${draft.method} ${draft.path}` : `${draft.method} ${draft.path} ${draft.version}`;
  const head = [requestLine, ...headers.map(([name, value]) => `${name}: ${value}`)].join('\r\n');
  // The head's own bytes: latin1 keeps a header's \u00e9 one byte, as a client writing bytes would.
  const ended =
    draft.endAfterWrite && draft.rawBody !== undefined && draft.rawBody.length === 0
      ? `${head}\r\n`
      : `${head}\r\n\r\n`;
  return Buffer.concat([Buffer.from(ended, 'latin1'), body]);
}

export function generateRequest(seed: number, index: number): FuzzRequest {
  const random = new SeededRandom(seed, index);
  const base = random.pick(VALID_REQUESTS);
  const family = pickFamily(random);
  const { mutation, draft } = family.mutate(random, base);
  return {
    index,
    family: family.name,
    mutation: `${base.name} (${base.path}), ${mutation}`,
    bytes: requestBytes(draft),
    endAfterWrite: draft.endAfterWrite ?? false,
    replyOptional: draft.replyOptional ?? false,
    head: draft.method === 'HEAD',
  };
}
