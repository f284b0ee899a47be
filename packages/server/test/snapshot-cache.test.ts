/**
 * The Python snapshot cache (snapshot-cache.ts) on its own: keys that change with every input
 * of a snapshot, entries read back only whole, a folder others can write refused, the oldest
 * entries dropped; and the snapshot a runner makes taken from it, no child started.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  existsSync,
  readdirSync,
  statSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeExecutionConfig } from '../src/config/config-schema.js';
import { makePythonSnapshot } from '../src/tools/code-execution/python-snapshot.js';
import { openSnapshotCache, snapshotKey, type SnapshotSource } from '../src/tools/code-execution/snapshot-cache.js';

const scratch = mkdtempSync(join(tmpdir(), 'mms-snapshot-cache-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A pyodide folder and child script of a few bytes each: the key reads their contents. */
const fakePyodide = join(scratch, 'pyodide');
mkdirSync(fakePyodide);
for (const name of ['pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide.asm.mjs', 'pyodide.mjs', 'package.json'])
  writeFileSync(join(fakePyodide, name), name);
writeFileSync(join(scratch, 'child.mjs'), 'prelude 1');

function source(memoryMb = 512): SnapshotSource {
  return { pyodideFolder: fakePyodide, childScript: join(scratch, 'child.mjs'), memoryMb };
}

function noWarning(detail: string): never {
  throw new Error(`unexpected warning: ${detail}`);
}

test('the key changes with the memory limit, the child script (its prelude) and any file of pyodide', async () => {
  const base = await snapshotKey(source());
  assert.match(base, /^[0-9a-f]{64}$/);
  assert.equal(await snapshotKey(source()), base);
  assert.notEqual(await snapshotKey(source(400)), base);
  writeFileSync(join(scratch, 'child.mjs'), 'prelude 2');
  const edited = await snapshotKey(source());
  assert.notEqual(edited, base);
  writeFileSync(join(fakePyodide, 'pyodide.asm.wasm'), 'another build');
  const rebuilt = await snapshotKey(source());
  assert.notEqual(rebuilt, edited);
  writeFileSync(join(fakePyodide, 'pyodide-lock.json'), '{}');
  assert.notEqual(await snapshotKey(source()), rebuilt, 'a file added to the package');
});

test('an entry stored is copied out whole; a missing or damaged one is not, and leaves nothing behind', async () => {
  const cache = (await openSnapshotCache(join(scratch, 'cache-a'), noWarning))!;
  const made = join(scratch, 'made.snapshot');
  writeFileSync(made, 'memory image '.repeat(1000));
  const out = join(scratch, 'out.snapshot');
  assert.equal(await cache.copyOut('k1', out), false, 'nothing stored yet');
  await cache.store('k1', made);
  assert.equal(await cache.copyOut('k1', out), true);
  assert.equal(readFileSync(out, 'utf8'), readFileSync(made, 'utf8'));
  // The same length, other bytes: the SHA-256 recorded beside it tells.
  writeFileSync(join(cache.folder, 'k1.snapshot'), 'MEMORY IMAGE '.repeat(1000));
  assert.equal(await cache.copyOut('k1', out), false);
  assert.equal(existsSync(out), false);
  rmSync(join(cache.folder, 'k1.json'));
  await cache.store('k2', made);
  rmSync(join(cache.folder, 'k2.json'));
  assert.equal(await cache.copyOut('k2', out), false, 'a snapshot without its record is not read');
});

test('a folder others may write in is not used, and the warning says why; a new folder is made 0700', async () => {
  const open = join(scratch, 'cache-open');
  const made = await openSnapshotCache(open, noWarning);
  assert.ok(made);
  assert.equal(statSync(open).mode & 0o777, 0o700);
  chmodSync(open, 0o777);
  const warnings: string[] = [];
  assert.equal(await openSnapshotCache(open, (detail) => warnings.push(detail)), undefined);
  assert.match(warnings.join('\n'), /cache-open cannot be used \(others may write in it \(mode 777\); chmod go-w it\)/);
});

test('past four entries the least recently used go', async () => {
  const cache = (await openSnapshotCache(join(scratch, 'cache-b'), noWarning))!;
  const made = join(scratch, 'small.snapshot');
  writeFileSync(made, 'x');
  for (const key of ['e1', 'e2', 'e3', 'e4']) {
    await cache.store(key, made);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  // e1 is read, so e2 is now the least recently used.
  assert.equal(await cache.copyOut('e1', join(scratch, 'read.snapshot')), true);
  await cache.store('e5', made);
  const kept = readdirSync(cache.folder).filter((name) => name.endsWith('.snapshot'));
  assert.deepEqual(kept.sort(), ['e1.snapshot', 'e3.snapshot', 'e4.snapshot', 'e5.snapshot']);
  assert.deepEqual(
    readdirSync(cache.folder).filter((name) => name.startsWith('.')),
    [],
    'no temporary file left',
  );
});

test('a runner whose key is in the cache copies it and starts no child to make one', async () => {
  const pyodideFolder = dirname(createRequire(import.meta.url).resolve('pyodide/package.json'));
  const paths = {
    pyodideFolder,
    childScript: fileURLToPath(new URL('../src/tools/code-execution/sandbox-child.mjs', import.meta.url)),
  };
  const limits = codeExecutionConfig.parse({ memoryMb: 300 });
  const cache = (await openSnapshotCache(join(scratch, 'cache-c'), noWarning))!;
  const entry = join(scratch, 'entry.snapshot');
  writeFileSync(entry, 'the image a start made earlier');
  await cache.store(await snapshotKey({ ...paths, memoryMb: 300 }), entry);
  // A platform whose prlimit does not exist: a child started to make a snapshot fails at once.
  const noChild = { namespaces: undefined, user: undefined, prlimit: join(scratch, 'no-such-prlimit') };
  const signal = new AbortController().signal;
  const snapshot = await makePythonSnapshot(noChild, limits, paths, signal, cache);
  try {
    assert.equal(readFileSync(snapshot.file, 'utf8'), 'the image a start made earlier');
  } finally {
    await snapshot.remove();
  }
  await assert.rejects(
    makePythonSnapshot(noChild, { ...limits, memoryMb: 400 }, paths, signal, cache),
    /making the Python snapshot failed .*ENOENT/,
    'another memoryMb is another key: a child is started to make it',
  );
});
