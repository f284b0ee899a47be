/**
 * How logs and spans name an API key: `key-` and the first 8 hex digits of the key's SHA-256
 * (`key-3f2a9c1b`). The same key has the same id on every replica and after every restart, so
 * a key's traffic can be followed and a leaked key's use found; the id does not give the key
 * back, and 32 bits of a hash narrow a long random key down to nothing useful. Keys are a flat
 * list today; when keys get names of their own, the log will name them by those.
 */
import { createHash } from 'node:crypto';

export function keyId(key: string): string {
  return `key-${createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 8)}`;
}
