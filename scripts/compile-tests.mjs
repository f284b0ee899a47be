// Compiles the packages' sources and every test to plain JavaScript under .cache/compiled/, a
// mirror of the repository, so that `npm test` runs them under plain node.
//
// Why (measured on 2 cores): through tsx's loader hooks a test file spent 2.6 s of CPU before
// its first test (the official SDK alone 1.45 s, 0.38 s under plain node): about 360 s of the
// suite's CPU for 138 files. esbuild compiles all of them in about a second.
//
// The mirror keeps every relative path true: the .ts files of the compiled folders become .js
// beside copies of their other files (worker .mjs, fixtures), and everything else the code
// reaches by a relative path (package.json, node_modules, examples/, .cache/models) is a
// symbolic link to the original. The workspace's packages are imported by name; those imports
// point at the mirror's sources, as tsconfig.json's `paths` do for tsx.
import { build } from 'esbuild';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
export const COMPILED = join(ROOT, '.cache', 'compiled');

/** Folders whose TypeScript is compiled, relative to the root; the rest is linked. */
const COMPILED_FOLDERS = [
  'test',
  'scripts',
  ...packageNames().flatMap((name) => ['src', 'test'].map((part) => `packages/${name}/${part}`)),
];

/** `@model-messages/<name>[/subpath]` as a path in the mirror, like tsconfig.json's `paths`. */
const WORKSPACE_ENTRIES = {
  '@model-messages/protocol': 'packages/protocol/src/index.js',
  '@model-messages/server': 'packages/server/src/index.js',
  '@model-messages/testing': 'packages/testing/src/index.js',
  '@model-messages/client': 'packages/client/src/index.js',
  '@model-messages/client/compare-command': 'packages/client/src/cli/compare-command.js',
};

/** What `node:test` is in the mirror: it lets short files share a process (scripts/test-api.mjs). */
const TEST_API = 'scripts/test-api.mjs';

function packageNames() {
  return readdirSync(join(ROOT, 'packages')).filter((name) => existsSync(join(ROOT, 'packages', name, 'package.json')));
}

/** Every file under `folder` (relative to the root), node_modules left out. */
export function filesUnder(folder) {
  const found = [];
  const walk = (relativeFolder) => {
    for (const entry of readdirSync(join(ROOT, relativeFolder), { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue;
      const path = join(relativeFolder, entry.name);
      if (entry.isDirectory()) walk(path);
      else found.push(path);
    }
  };
  if (existsSync(join(ROOT, folder))) walk(folder);
  return found;
}

/** Makes `path` in the mirror a link to the same path in the repository, unless it already is. */
function linkToOriginal(path) {
  const link = join(COMPILED, path);
  const target = relative(dirname(link), join(ROOT, path));
  try {
    if (readlinkSync(link) === target) return;
    rmSync(link, { recursive: true, force: true });
  } catch (error) {
    if (error.code !== 'ENOENT') rmSync(link, { recursive: true, force: true });
  }
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(target, link);
}

/**
 * Links every entry of `folder` that is not itself on the way to a compiled folder. Not .git, and
 * not .cache, which holds the mirror: the tests find the real one (packages/testing's
 * repository-root.ts).
 */
function linkSiblings(folder) {
  for (const entry of readdirSync(join(ROOT, folder))) {
    const path = folder ? `${folder}/${entry}` : entry;
    if (COMPILED_FOLDERS.includes(path) || path === '.git' || path === '.cache') continue;
    if (COMPILED_FOLDERS.some((compiled) => compiled.startsWith(`${path}/`))) linkSiblings(path);
    else linkToOriginal(path);
  }
}

/** Marks every import external, pointing the workspace's package names and node:test at the mirror. */
const keepImports = {
  name: 'keep-imports',
  setup(builder) {
    builder.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const entry = args.path === 'node:test' ? TEST_API : WORKSPACE_ENTRIES[args.path];
      if (entry === undefined) return { path: args.path, external: true };
      const importerInMirror = join(COMPILED, relative(ROOT, args.importer));
      let path = relative(dirname(importerInMirror), join(COMPILED, entry));
      if (!path.startsWith('.')) path = `./${path}`;
      return { path, external: true };
    });
  },
};

export async function compileTests() {
  const started = Date.now();
  mkdirSync(COMPILED, { recursive: true });
  // A compiled folder must be a folder of the mirror: through a link (one that was linked before
  // it was compiled) the output would land among the sources.
  for (const folder of COMPILED_FOLDERS) {
    const inMirror = join(COMPILED, folder);
    if (existsSync(inMirror) && lstatSync(inMirror).isSymbolicLink()) rmSync(inMirror);
  }
  const files = COMPILED_FOLDERS.flatMap(filesUnder);
  const isSource = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts');
  const sources = files.filter(isSource);
  // Other files in compiled folders are copied, not linked: a linked .mjs would run from the
  // original folder, where its relative imports find no .js files.
  for (const file of files) {
    if (isSource(file)) continue;
    const copy = join(COMPILED, file);
    if (existsSync(copy) && statSync(copy).mtimeMs >= statSync(join(ROOT, file)).mtimeMs) continue;
    mkdirSync(dirname(copy), { recursive: true });
    copyFileSync(join(ROOT, file), copy);
  }
  linkSiblings('');
  await build({
    absWorkingDir: ROOT,
    entryPoints: sources,
    outdir: COMPILED,
    outbase: ROOT,
    bundle: true,
    plugins: [keepImports],
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    // The sources' own names in stack traces; tsx does the same.
    keepNames: true,
    logLevel: 'warning',
  });
  // A source deleted since the last run must not leave its compiled test behind.
  for (const folder of COMPILED_FOLDERS) {
    const compiledFolder = join(COMPILED, folder);
    if (!existsSync(compiledFolder)) continue;
    for (const file of filesUnder(join('.cache', 'compiled', folder))) {
      const original = relative(join('.cache', 'compiled'), file);
      const source = original.replace(/\.js(\.map)?$/, '.ts');
      if (!existsSync(join(ROOT, original)) && !existsSync(join(ROOT, source))) rmSync(join(ROOT, file));
    }
  }
  return { files: sources.length, milliseconds: Date.now() - started };
}

/** `test/x.test.ts` -> its compiled file in the mirror. */
export function compiledPath(source) {
  return join(COMPILED, relative(ROOT, resolve(source))).replace(/\.ts$/, '.js');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { files, milliseconds } = await compileTests();
  process.stdout.write(`compiled ${files} files in ${milliseconds} ms\n`);
}
