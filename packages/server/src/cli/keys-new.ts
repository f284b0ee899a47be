/**
 * `mms keys new --id team-a`: a fresh key of 32 random bytes (256 bits, so that a fast hash of it
 * is safe to keep: config/key-config.ts), printed once, and the config entry with its hash. The
 * key is shown nowhere else and kept nowhere: lost, it is replaced by a new one.
 */
import { randomBytes } from 'node:crypto';
import { keyConfig, KEY_HASH_PREFIX } from '../config/key-config.js';
import { sha256Hex } from '../support/key-id.js';

/** Keys start with this, so that a secret scanner or a reader knows one when it sees one. */
const KEY_PREFIX = 'mms-';

/** Writes the key and its entry; returns the exit code (2: an id the config would refuse). */
export function newKey(id: string, out: NodeJS.WritableStream, errors: NodeJS.WritableStream): number {
  const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const entry = { id, hash: `${KEY_HASH_PREFIX}${sha256Hex(key)}` };
  const checked = keyConfig.safeParse(entry);
  if (!checked.success) {
    errors.write(`mms: --id: ${checked.error.issues[0]?.message}\n`);
    return 2;
  }
  out.write(
    `API key (shown this once; give it to its user, keep it nowhere else):\n  ${key}\n\n` +
      `Config entry (add it to "keys"; add "models" and "limits" as needed):\n  ${JSON.stringify(entry)}\n`,
  );
  return 0;
}
