/**
 * The data folder's database (issue 37): the quotas' counts and the usage history of a service
 * whose limits are kept in memory (one instance), in `<dataFolder>/limits.sqlite`, so that a
 * restart loses neither. SQLite through better-sqlite3: a real database in one file, whose
 * synchronous calls take microseconds, so that a quota's charge is written before the request
 * goes on. In WAL mode with `synchronous = NORMAL`, a committed charge survives the process being
 * killed (a power cut may lose the last ones). Without a data folder (a program that embeds the
 * service, the tests), the same tables live in memory.
 *
 * better-sqlite3 is loaded only here, when the memory store is used: a service on Redis never
 * loads it.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { ConfigError } from '../support/config-error.js';

export type Database = BetterSqlite3.Database;

/** The file's name in the data folder. */
export const DATABASE_FILE = 'limits.sqlite';

/** Bumped when the tables change; a file of another version stops the start rather than being misread. */
const SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS quota_usage (
  key_id TEXT NOT NULL,
  quota TEXT NOT NULL,
  period TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  PRIMARY KEY (key_id, quota, period)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_history (
  span TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  requests INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_input_tokens INTEGER NOT NULL,
  PRIMARY KEY (span, bucket, key_id, model)
) WITHOUT ROWID;
`;

/** Opens (or makes) the database in `dataFolder`, or one in memory without a folder. */
export function openDatabase(dataFolder: string | undefined): Database {
  const path = dataFolder === undefined ? ':memory:' : join(dataFolder, DATABASE_FILE);
  let database: Database | undefined;
  try {
    if (dataFolder !== undefined) mkdirSync(dataFolder, { recursive: true, mode: 0o700 });
    const Sqlite = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    database = new Sqlite(path);
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    // Another process on the same file (a second `mms serve` on one data folder) waits its turn.
    database.pragma('busy_timeout = 2000');
    const version = database.pragma('user_version', { simple: true }) as number;
    if (version !== 0 && version !== SCHEMA_VERSION)
      throw new Error(`it holds tables of version ${version}; this mms reads version ${SCHEMA_VERSION}`);
    database.exec(SCHEMA);
    database.pragma(`user_version = ${SCHEMA_VERSION}`);
    return database;
  } catch (error) {
    database?.close();
    throw new ConfigError(
      `limits database ${path}: cannot open it (${(error as Error).message}); set dataFolder or MMS_DATA_FOLDER to a writable folder`,
    );
  }
}
