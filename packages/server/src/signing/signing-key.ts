/**
 * Where the signing key comes from (docs/decisions/0014-signed-server-blocks.md): the config's
 * `signingKey`, which replicas share (a list while a key is rotated: the first signs, the others
 * only verify); else a key file in the data folder, made with 32 random bytes at first start and
 * read at every later one, so that a restart keeps what the service signed verifiable; else, for
 * a program that embeds the service and names neither, a random key that lives as long as the
 * process.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../support/config-error.js';
import { MIN_KEY_BYTES } from './signer.js';

/** The key file's name in the data folder. */
export const KEY_FILE = 'signing-key';

/** The data folder when neither the config's `dataFolder` nor MMS_DATA_FOLDER names one. */
export function defaultDataFolder(): string {
  return join(homedir(), '.local', 'share', 'mms');
}

export interface KeySources {
  /** One key, or the signing key first and then retired ones that still verify. */
  signingKey?: string | readonly string[] | undefined;
  dataFolder?: string | undefined;
}

/** The key that signs, and retired ones that only verify (a rotation's old keys). */
export interface SigningKeys {
  current: Buffer;
  retired: Buffer[];
}

/** The keys: `signingKey`'s UTF-8, the data folder's key file, or random ones. */
export function resolveSigningKey(sources: KeySources): SigningKeys {
  if (sources.signingKey !== undefined) {
    const given = typeof sources.signingKey === 'string' ? [sources.signingKey] : sources.signingKey;
    const keys = given.map((key, index) => {
      if (key.length < MIN_KEY_BYTES) {
        const field = typeof sources.signingKey === 'string' ? 'signingKey' : `signingKey.${index}`;
        throw new ConfigError(`${field}: must have at least ${MIN_KEY_BYTES} characters`);
      }
      return Buffer.from(key, 'utf8');
    });
    if (keys.length === 0) throw new ConfigError('signingKey: a list needs at least one key');
    return { current: keys[0]!, retired: keys.slice(1) };
  }
  if (sources.dataFolder !== undefined) return { current: keyFileIn(sources.dataFolder), retired: [] };
  return { current: randomBytes(MIN_KEY_BYTES), retired: [] };
}

/**
 * The key in `folder`'s key file, made first when there is none. A file that cannot be read or
 * holds no key stops the start: making a new key in its place would silently void everything
 * signed with the old one.
 */
function keyFileIn(folder: string): Buffer {
  const path = join(folder, KEY_FILE);
  let text = readKeyFile(path);
  if (text === undefined) {
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      createKeyFile(path);
    } catch (error) {
      throw new ConfigError(
        `signing key file ${path}: cannot create it (${reason(error)}); set dataFolder or MMS_DATA_FOLDER to a writable folder`,
      );
    }
    text = readKeyFile(path) ?? '';
  }
  const key = /^[A-Za-z0-9+/]{43}=\n?$/.test(text) ? Buffer.from(text, 'base64') : undefined;
  if (key?.byteLength !== MIN_KEY_BYTES)
    throw new ConfigError(
      `signing key file ${path}: it does not hold a key (${MIN_KEY_BYTES} bytes in base64 on one line); restore it, or delete it to make a new key, which voids the thinking blocks and paused turns signed with the old one`,
    );
  return key;
}

/** The file's text, or undefined when there is no such file. */
function readKeyFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`signing key file ${path}: cannot read it (${reason(error)})`);
  }
}

/**
 * Writes a new key unless the file exists. Written in full to a file of its own, then linked
 * into place, which fails if another process got there first: no start ever reads half a key.
 */
function createKeyFile(path: string): void {
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, `${randomBytes(MIN_KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
}

function reason(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}
