/**
 * How logs and spans name an API key: `key-` and the first 8 hex digits of the key's SHA-256
 * (`key-3f2a9c1b`). The same key has the same id on every replica and after every restart, so
 * a key's traffic can be followed and a leaked key's use found; the id does not give the key
 * back, and 32 bits of a hash narrow a long random key down to nothing useful. This is the id of
 * a plain key (the config's apiKeys); a key of the config's keys is named by its own id.
 */
import { createHash } from 'node:crypto';

export function keyId(key: string): string {
  return `key-${sha256Hex(key).slice(0, 8)}`;
}

/** The SHA-256 of a key, as the config's `keys` hold it after `sha256:` (config/key-config.ts). */
export function sha256Hex(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
