/**
 * The folder index on disk, so that a restart reads one file instead of every document again:
 * MiniSearch's own serialisation (`toJSON` / `loadJS`) plus a manifest of each document's path,
 * mtime and size, which tells the next start which files changed while the service was down.
 * A file written by another folder, URL base or format version is ignored (and rebuilt), and it
 * is written to a temporary name and renamed, so a crash never leaves half an index behind.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import MiniSearch, { type AsPlainObject, type Options } from 'minisearch';
import type { FolderDocument } from './folder-document.js';

/** Bump when what is indexed, or how, changes: files of an older version are then rebuilt. */
const FORMAT_VERSION = 1;
const FORMAT = 'mms-folder-search-index';

export interface FileStamp {
  mtimeMs: number;
  size: number;
}

/** What a saved index must have been built from to be reused. */
export interface IndexIdentity {
  folder: string;
  urlBase: string | null;
}

interface SavedIndex extends IndexIdentity {
  format: typeof FORMAT;
  version: number;
  manifest: Record<string, FileStamp>;
  index: AsPlainObject;
}

export interface LoadedIndex {
  manifest: Map<string, FileStamp>;
  index: MiniSearch<FolderDocument>;
}

/** The saved index, or undefined when there is none, or it is unreadable or built from something else. */
export async function loadIndexFile(
  path: string,
  identity: IndexIdentity,
  options: Options<FolderDocument>,
): Promise<LoadedIndex | undefined> {
  let saved: SavedIndex;
  try {
    saved = JSON.parse(await readFile(path, 'utf8')) as SavedIndex;
  } catch {
    return undefined;
  }
  if (
    saved?.format !== FORMAT ||
    saved.version !== FORMAT_VERSION ||
    saved.folder !== identity.folder ||
    saved.urlBase !== identity.urlBase
  )
    return undefined;
  try {
    return { manifest: new Map(Object.entries(saved.manifest)), index: MiniSearch.loadJS(saved.index, options) };
  } catch {
    return undefined;
  }
}

export async function saveIndexFile(
  path: string,
  identity: IndexIdentity,
  manifest: ReadonlyMap<string, FileStamp>,
  index: MiniSearch<FolderDocument>,
): Promise<void> {
  const saved: SavedIndex = {
    format: FORMAT,
    version: FORMAT_VERSION,
    ...identity,
    manifest: Object.fromEntries(manifest),
    index: index.toJSON(),
  };
  // A dot name, so that the folder scan (and its watcher) skips it when the file lives in the folder.
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temporary, JSON.stringify(saved));
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
