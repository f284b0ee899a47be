/**
 * A `server_tool_use` block's id: `srvtoolu_1<nonce><tag>`, with 12 characters of random nonce
 * (ids stay unique when a conversation makes the same call twice) and a tag over the nonce, the
 * call's name, its input (canonical JSON), the digest of the conversation and the turn's blocks
 * before it, and the digest of its result (turn-digest.ts). Only this service can make an id that
 * verifies, and only for that call after those blocks, answered by that result: an invented
 * call, a real one moved behind other words or under another conversation, or one whose result
 * was rewritten, does not (issue 32).
 */
import { randomBytes } from 'node:crypto';
import { canonicalJson } from '../json-schema/canonical-json.js';
import { TAG_CHARACTERS, type Signer } from './signer.js';

const PREFIX = 'srvtoolu_1';
const PURPOSE = 'server-call-id/2';
const NONCE_CHARACTERS = 12;

export interface ServerCall {
  name: string;
  input: Record<string, unknown>;
}

/** Where a call stands: the digest of what comes before it, and of its result (turn-digest.ts). */
export interface CallPlace {
  before: string;
  result: string;
}

/**
 * `bytes`: where the nonce's bytes come from; crypto's, except for the bench's fuzz, whose request
 * N of a seed must be the same bytes on every run (bench/attack/conversation-blocks.ts).
 */
export function signedServerCallId(
  signer: Signer,
  call: ServerCall,
  place: CallPlace,
  bytes: (size: number) => Buffer = randomBytes,
): string {
  const nonce = bytes((NONCE_CHARACTERS / 4) * 3).toString('base64url');
  return PREFIX + nonce + signer.tag(PURPOSE, fields(nonce, call, place));
}

export function serverCallIdVerifies(signer: Signer, id: string, call: ServerCall, place: CallPlace): boolean {
  if (!id.startsWith(PREFIX) || id.length !== PREFIX.length + NONCE_CHARACTERS + TAG_CHARACTERS) return false;
  const nonce = id.slice(PREFIX.length, PREFIX.length + NONCE_CHARACTERS);
  return signer.verifies(id.slice(PREFIX.length + NONCE_CHARACTERS), PURPOSE, fields(nonce, call, place));
}

function fields(nonce: string, call: ServerCall, place: CallPlace): string[] {
  return [nonce, call.name, canonicalJson(call.input), place.before, place.result];
}
