/**
 * A `server_tool_use` block's id: `srvtoolu_1<nonce><tag>`, with 12 characters of random nonce
 * (ids stay unique when a conversation makes the same call twice) and a tag over the nonce, the
 * call's name, its input (canonical JSON) and the digest of the turn's blocks before it
 * (turn-digest.ts). Only this service can make an id that verifies, and only for that call after
 * those blocks: an invented call, or a real one moved behind other words, does not.
 */
import { randomBytes } from 'node:crypto';
import { canonicalJson } from '../json-schema/canonical-json.js';
import { TAG_CHARACTERS, type Signer } from './signer.js';

const PREFIX = 'srvtoolu_1';
const PURPOSE = 'server-call-id/1';
const NONCE_CHARACTERS = 12;

export interface ServerCall {
  name: string;
  input: Record<string, unknown>;
}

/**
 * `before`: the digest of the turn's blocks before the call (turn-digest.ts). `bytes`: where the
 * nonce's bytes come from; crypto's, except for the bench's fuzz, whose request N of a seed must
 * be the same bytes on every run (bench/attack/conversation-blocks.ts).
 */
export function signedServerCallId(
  signer: Signer,
  call: ServerCall,
  before: string,
  bytes: (size: number) => Buffer = randomBytes,
): string {
  const nonce = bytes((NONCE_CHARACTERS / 4) * 3).toString('base64url');
  return PREFIX + nonce + signer.tag(PURPOSE, fields(nonce, call, before));
}

export function serverCallIdVerifies(signer: Signer, id: string, call: ServerCall, before: string): boolean {
  if (!id.startsWith(PREFIX) || id.length !== PREFIX.length + NONCE_CHARACTERS + TAG_CHARACTERS) return false;
  const nonce = id.slice(PREFIX.length, PREFIX.length + NONCE_CHARACTERS);
  return signer.verifies(id.slice(PREFIX.length + NONCE_CHARACTERS), PURPOSE, fields(nonce, call, before));
}

function fields(nonce: string, call: ServerCall, before: string): string[] {
  return [nonce, call.name, canonicalJson(call.input), before];
}
