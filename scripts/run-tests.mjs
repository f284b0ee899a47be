#!/usr/bin/env node
// Runs every *.test.ts under packages/*/test and test/ with node's own test runner through tsx.
// Node 20's --test takes no globs, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function findTests(folder) {
  let found = [];
  let entries;
  try {
    entries = readdirSync(folder);
  } catch {
    return found;
  }
  for (const entry of entries) {
    const path = join(folder, entry);
    if (entry === 'node_modules') continue;
    if (statSync(path).isDirectory()) found = found.concat(findTests(path));
    else if (entry.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const roots = [...readdirSync('packages').map((name) => join('packages', name, 'test')), 'test'];
const files = roots.flatMap(findTests).sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', ...process.argv.slice(2), ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
