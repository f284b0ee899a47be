/**
 * What a sandbox's working folder holds: bytes and entries, counted by walking it. The kernel
 * limits one file's size (prlimit --fsize); nothing else limits how many files code writes, so
 * without this watch one execution could fill the service's disk within its time limit.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Entries (files, folders, links) one working folder may hold. */
export const MAX_FOLDER_ENTRIES = 10_000;
/**
 * Each entry counts at least one block, as a file system allocates it: many empty files fill a
 * disk's inodes and blocks too.
 */
const BLOCK_BYTES = 4096;

export interface FolderUsage {
  bytes: number;
  entries: number;
}

/**
 * Walks `folder` without following links, and stops early once it holds more than `maxBytes` or
 * MAX_FOLDER_ENTRIES: the verdict is known, and a folder stuffed with entries must not make the
 * walk itself expensive. An entry that vanishes during the walk is skipped.
 */
export async function folderUsage(folder: string, maxBytes: number): Promise<FolderUsage> {
  const usage: FolderUsage = { bytes: 0, entries: 0 };
  const pending = [folder];
  while (pending.length > 0 && !isOver(usage, maxBytes)) {
    const current = pending.pop()!;
    let names: string[];
    try {
      names = await readdir(current);
    } catch {
      continue;
    }
    for (const name of names) {
      if (isOver(usage, maxBytes)) break;
      const path = join(current, name);
      try {
        const stats = await lstat(path);
        usage.entries += 1;
        usage.bytes += Math.max(stats.size, BLOCK_BYTES);
        if (stats.isDirectory()) pending.push(path);
      } catch {
        // Deleted between the listing and the lstat.
      }
    }
  }
  return usage;
}

export function isOver(usage: FolderUsage, maxBytes: number): boolean {
  return usage.bytes > maxBytes || usage.entries > MAX_FOLDER_ENTRIES;
}
