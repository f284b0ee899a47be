/** The measure of a sandbox's working folder (tools/code-execution/folder-usage.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { folderUsage, isOver, MAX_FOLDER_ENTRIES } from '../src/tools/code-execution/folder-usage.js';

const BIG = 1 << 30;

test('counts every entry, nested folders included, each at least one 4 KiB block', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-usage-'));
  writeFileSync(join(folder, 'empty'), '');
  writeFileSync(join(folder, 'big'), Buffer.alloc(10_000));
  mkdirSync(join(folder, 'inner', 'deeper'), { recursive: true });
  writeFileSync(join(folder, 'inner', 'deeper', 'small'), 'x');
  const usage = await folderUsage(folder, BIG);
  // empty, big, inner, deeper, small: folders count as entries with at least a block too.
  assert.equal(usage.entries, 5);
  const folderBytes = (path: string) => Math.max(lstatSync(path).size, 4096);
  assert.equal(
    usage.bytes,
    4096 + 10_000 + folderBytes(join(folder, 'inner')) + folderBytes(join(folder, 'inner', 'deeper')) + 4096,
  );
  assert.equal(isOver(usage, BIG), false);
  assert.equal(isOver(usage, 10_000), true);
});

test('a link counts as itself, not as what it points to', async () => {
  const outside = mkdtempSync(join(tmpdir(), 'mms-usage-outside-'));
  writeFileSync(join(outside, 'huge'), Buffer.alloc(1 << 20));
  const folder = mkdtempSync(join(tmpdir(), 'mms-usage-'));
  symlinkSync(join(outside, 'huge'), join(folder, 'link'));
  symlinkSync(outside, join(folder, 'folder-link'));
  const usage = await folderUsage(folder, BIG);
  assert.equal(usage.entries, 2);
  assert.ok(usage.bytes < 1 << 20, `${usage.bytes} bytes: the link was followed`);
});

test('past the entry limit the walk stops early and says so', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-usage-'));
  for (let index = 0; index <= MAX_FOLDER_ENTRIES + 50; index += 1) writeFileSync(join(folder, `f${index}`), '');
  const usage = await folderUsage(folder, BIG);
  assert.equal(isOver(usage, BIG), true);
  assert.equal(usage.entries, MAX_FOLDER_ENTRIES + 1, 'stopped at the first entry past the limit');
});
