/**
 * Python snapshots kept between starts (python-snapshot.ts makes them): making one costs a
 * sandbox start of its own, about 4 s of CPU and 3.4 s of wall on two cores, before the first
 * execution of every service start, and every runner in a process made its own. A snapshot
 * depends only on what the sandbox loads, so it is kept under a key of exactly that: the bytes of
 * every file of the pyodide package (its WebAssembly module, standard library and loader), the
 * sandbox child script (it holds the prelude the snapshot has run), the Node version, and the
 * WebAssembly memory's maximum (memoryMb). An upgraded pyodide or Node, or an edited prelude, is another key: no
 * entry can go stale.
 *
 * The folder must be the service user's own and writable by no one else (mode 0700 when made
 * here): a snapshot is the memory every sandbox starts from, so whoever could write it could
 * tamper with every execution's result. A folder that fails the check is not used, said once;
 * the snapshot is then made for this runner alone, as without a cache. An entry is written
 * whole to a temporary name and renamed, so a reader never sees half of one, and is read back
 * only when its size and SHA-256 match the record written beside it. The newest entries are
 * kept (KEPT_ENTRIES), for services with different memory limits side by side.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';

/** Where snapshots are kept unless `codeExecution.snapshotFolder` says otherwise. */
export function defaultSnapshotFolder(): string {
  return join(homedir(), '.cache', 'mms', 'python-snapshots');
}

/** Entries kept: one per pyodide build and memory limit in use, and a few past ones. */
const KEPT_ENTRIES = 4;
const SNAPSHOT_SUFFIX = '.snapshot';
const RECORD_SUFFIX = '.json';

export interface SnapshotSource {
  pyodideFolder: string;
  childScript: string;
  memoryMb: number;
}

interface EntryRecord {
  bytes: number;
  sha256: string;
}

/** The key of what a snapshot made from `source` holds: hex SHA-256 of its inputs. */
export async function snapshotKey(source: SnapshotSource): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`node ${process.version}\nmemoryMb ${source.memoryMb}\n`);
  // Every file of the pyodide package (its module, standard library, loader, lock file: 14 MB,
  // some tens of milliseconds), then the child script.
  const entries = await readdir(source.pyodideFolder, { withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name)
    .sort()
    .map((name) => join(source.pyodideFolder, name));
  for (const path of [...files, source.childScript]) hash.update(`${basename(path)} ${await fileSha256(path)}\n`);
  return hash.digest('hex');
}

/**
 * The cache in `folder`, made (mode 0700) where it does not exist; undefined, with the reason
 * given to `warn`, where it cannot be used.
 */
export async function openSnapshotCache(
  folder: string,
  warn: (detail: string) => void,
): Promise<SnapshotCache | undefined> {
  try {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const info = await stat(folder);
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid) throw new Error(`it belongs to user ${info.uid}, not to this service's`);
    if ((info.mode & 0o022) !== 0)
      throw new Error(`others may write in it (mode ${(info.mode & 0o777).toString(8)}); chmod go-w it`);
    return new SnapshotCache(folder);
  } catch (error) {
    warn(`the Python snapshot folder ${folder} cannot be used (${(error as Error).message}), so each start makes one`);
    return undefined;
  }
}

export class SnapshotCache {
  constructor(readonly folder: string) {}

  /** Copies the entry for `key` to `destination`; false when there is none, or it does not match its record. */
  async copyOut(key: string, destination: string): Promise<boolean> {
    const file = join(this.folder, key + SNAPSHOT_SUFFIX);
    try {
      const record = JSON.parse(await readFile(join(this.folder, key + RECORD_SUFFIX), 'utf8')) as EntryRecord;
      await copyFile(file, destination);
      const copied = await stat(destination);
      if (copied.size === record.bytes && (await fileSha256(destination)) === record.sha256) {
        // Marked as used: pruning drops the entries least recently used.
        const now = new Date();
        await utimes(file, now, now);
        return true;
      }
    } catch {
      // No entry, or one half removed: made again.
    }
    await rm(destination, { force: true });
    return false;
  }

  /** Keeps a copy of `file` as the entry for `key`, then drops the oldest entries past KEPT_ENTRIES. */
  async store(key: string, file: string): Promise<void> {
    const temporary = join(this.folder, `.${key}.${process.pid}.${Date.now()}`);
    try {
      await copyFile(file, temporary);
      await chmod(temporary, 0o600);
      const record: EntryRecord = { bytes: (await stat(temporary)).size, sha256: await fileSha256(temporary) };
      // The record first: a snapshot without its record is never read, a record without its snapshot neither.
      await writeFile(join(this.folder, key + RECORD_SUFFIX), JSON.stringify(record), { mode: 0o600 });
      await rename(temporary, join(this.folder, key + SNAPSHOT_SUFFIX));
    } finally {
      await rm(temporary, { force: true });
    }
    await this.prune();
  }

  private async prune(): Promise<void> {
    const entries = await Promise.all(
      (await readdir(this.folder))
        .filter((name) => name.endsWith(SNAPSHOT_SUFFIX))
        .map(async (name) => ({
          key: name.slice(0, -SNAPSHOT_SUFFIX.length),
          used: (await stat(join(this.folder, name)).catch(() => undefined))?.mtimeMs ?? 0,
        })),
    );
    entries.sort((first, second) => second.used - first.used);
    for (const { key } of entries.slice(KEPT_ENTRIES)) {
      await rm(join(this.folder, key + SNAPSHOT_SUFFIX), { force: true });
      await rm(join(this.folder, key + RECORD_SUFFIX), { force: true });
    }
  }
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
