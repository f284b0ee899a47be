/**
 * API key check: `x-api-key`, or `Authorization: Bearer <key>`. A plain key (the config's
 * apiKeys) is compared with timingSafeEqual against every configured plain key, so that neither
 * the position of a mismatch nor which key matched leaks through timing. A key of another length
 * is compared with the configured key itself instead, so that the time spent is the same whatever
 * the length of what was sent: the length of a configured key does not leak either. Keys never
 * reach a log line.
 *
 * A key of the config's `keys` is held as its SHA-256 only (config/key-config.ts): the presented
 * key is hashed once and its digest compared, again with timingSafeEqual and against every hash
 * (all 32 bytes long). Both lists are always walked whole, whichever matched. The hash is
 * skipped when no such key is configured: a byte comparison is about a fifth of its cost.
 */
import { createHash, hash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ServiceError } from '@model-messages/protocol';
import { KEY_HASH_PREFIX, type KeyConfig } from '../config/key-config.js';
import { configuredClientKey, plainClientKey, type ClientKey } from '../keys/client-key.js';

export class ApiKeyCheck {
  private readonly plainKeys: Buffer[];
  private readonly hashes: Buffer[];
  /** Plain keys' identities, then the hashed keys', in the order of the two lists; made once. */
  readonly identities: readonly ClientKey[];

  constructor(plainKeys: readonly string[], hashedKeys: readonly KeyConfig[] = []) {
    this.plainKeys = plainKeys.map((key) => Buffer.from(key, 'utf8'));
    this.hashes = hashedKeys.map((key) => Buffer.from(key.hash.slice(KEY_HASH_PREFIX.length), 'hex'));
    this.identities = [...plainKeys.map(plainClientKey), ...hashedKeys.map(configuredClientKey)];
  }

  /** The configured key the headers carry (its identity, never the key); throws 401 when they carry none. */
  assertAuthorized(headers: IncomingHttpHeaders): ClientKey {
    const presented = presentedKey(headers);
    if (presented === undefined) {
      throw new ServiceError('authentication', 'x-api-key header is required');
    }
    const candidate = Buffer.from(presented, 'utf8');
    let matched = -1;
    for (let index = 0; index < this.plainKeys.length; index += 1) {
      const known = this.plainKeys[index]!;
      const sameLength = candidate.length === known.length;
      // Every configured key is compared, in full, whether or not an earlier one matched.
      const equal = timingSafeEqual(sameLength ? candidate : known, known);
      matched = sameLength && equal ? index : matched;
    }
    if (this.hashes.length > 0) {
      const digest = sha256(candidate);
      for (let index = 0; index < this.hashes.length; index += 1) {
        const equal = timingSafeEqual(digest, this.hashes[index]!);
        matched = equal ? this.plainKeys.length + index : matched;
      }
    }
    if (matched < 0) throw new ServiceError('authentication', 'invalid x-api-key');
    return this.identities[matched]!;
  }
}

/**
 * crypto.hash costs a third of createHash for one short input; it came with Node 20.12, and the
 * service runs on any Node 20.
 */
const sha256: (data: Buffer) => Buffer =
  typeof hash === 'function'
    ? (data) => hash('sha256', data, 'buffer')
    : (data) => createHash('sha256').update(data).digest();

function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return apiKey;
  const authorization = headers.authorization;
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  return bearer?.[1];
}
