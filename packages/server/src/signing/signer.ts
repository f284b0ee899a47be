/**
 * The service's one MAC: HMAC-SHA-256 under its signing key (signing-key.ts), cut to 128 bits
 * and written in base64url. Every signed thing (thinking signatures, server tool call ids, web
 * search content; docs/decisions/0014-signed-server-blocks.md) names its purpose, so that a tag
 * made for one can never pass for another, and gives its fields as a list: each is hashed with
 * its length in front, so that no two lists of fields hash the same way.
 */
import { createHmac, timingSafeEqual, type Hash, type Hmac } from 'node:crypto';

/** What a tag is for, with the version of its format. */
export type SigningPurpose = 'thinking-signature/1' | 'server-call-id/2' | 'search-content/1' | 'compaction-summary/1';

/** The smallest key: HMAC-SHA-256 gains nothing from more, and is weakened by less. */
export const MIN_KEY_BYTES = 32;
/** 128 bits: past any forgery by trial, and short enough for ids. */
const TAG_BYTES = 16;
/** TAG_BYTES in base64url, without padding. */
export const TAG_CHARACTERS = 22;

export class Signer {
  private readonly keys: Buffer[];

  /**
   * `key` signs; `retired` keys (a rotation's old ones, issue 32) only verify, so that what they
   * signed, a paused turn or a thinking block in a conversation still going, stays good while
   * the new key takes over.
   */
  constructor(key: Uint8Array, retired: readonly Uint8Array[] = []) {
    for (const each of [key, ...retired])
      if (each.byteLength < MIN_KEY_BYTES) throw new Error(`a signing key needs at least ${MIN_KEY_BYTES} bytes`);
    this.keys = [key, ...retired].map((each) => Buffer.from(each));
  }

  /** The tag of `fields` for `purpose` under the signing key: TAG_CHARACTERS base64url characters. */
  tag(purpose: SigningPurpose, fields: readonly string[]): string {
    return tagUnder(this.keys[0]!, purpose, fields);
  }

  /** Whether `tag` is the tag of `fields` for `purpose` under any of the keys, compared in constant time. */
  verifies(tag: string, purpose: SigningPurpose, fields: readonly string[]): boolean {
    if (tag.length !== TAG_CHARACTERS) return false;
    const given = Buffer.from(tag);
    let verified = false;
    // Every key is tried, whichever matches, so that the time taken says nothing of which did.
    for (const key of this.keys)
      verified = timingSafeEqual(given, Buffer.from(tagUnder(key, purpose, fields))) || verified;
    return verified;
  }
}

function tagUnder(key: Buffer, purpose: SigningPurpose, fields: readonly string[]): string {
  const hmac = createHmac('sha256', key);
  addField(hmac, purpose);
  for (const field of fields) addField(hmac, field);
  return hmac.digest().subarray(0, TAG_BYTES).toString('base64url');
}

/** Adds `field` to a MAC or hash with its length in bytes in front (4 bytes, big-endian). */
export function addField(target: Hash | Hmac, field: string): void {
  const length = Buffer.allocUnsafe(4);
  length.writeUInt32BE(Buffer.byteLength(field, 'utf8'));
  target.update(length);
  target.update(field, 'utf8');
}
