#!/usr/bin/env node
// `npm test`: builds the packages, then runs the type check and Prettier's check beside every
// *.test.ts under packages/*/test and test/ (node's own test runner, on the tests compiled to
// plain JavaScript by scripts/compile-tests.mjs). Exits 1 when any of them fails; the test
// runner's summary stays the last lines of the output.
//
// Why this shape (measured on 2 cores): run one after another, the build, the type check
// (21 s with TypeScript 5.9; 4 s from scratch with the native TypeScript 7) and Prettier (19 s;
// 9 s with the oxc parser) came before the first test, and Node 20 runs one test file at a time
// there (its default concurrency is cores - 1). Most test files spend their time waiting on
// sockets, timers and child processes, so several files run at once; the checks keep their
// results in .cache/ and redo only what changed. Short files share a process
// (scripts/test-groups.mjs).
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { compiledPath, compileTests, filesUnder } from './compile-tests.mjs';
import { testProcesses } from './test-groups.mjs';

/** Runs `npm run <script>` with its output held, and says in one line how it went. */
function runCheck(script) {
  const started = Date.now();
  const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => {
    child.on('close', (status) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      // One write, so that the line is not cut into the test runner's output.
      if (status === 0) process.stdout.write(`npm run ${script}: passed in ${seconds} s\n`);
      else process.stdout.write(`npm run ${script}: FAILED (exit ${status}) in ${seconds} s\n${output}\n`);
      resolve(status === 0);
    });
  });
}

// The tests start the compiled `mms` (test/mms-command.ts): build it before any of them runs.
const build = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const checks = Promise.all([runCheck('typecheck'), runCheck('format:check')]);
await compileTests();

const roots = [...readdirSync('packages').map((name) => join('packages', name, 'test')), 'test'];
const files = testProcesses(
  roots
    .flatMap((folder) => filesUnder(folder).filter((file) => file.endsWith('.test.ts')))
    .sort()
    .map((source) => ({ source, compiled: compiledPath(source) })),
);
const flags = process.argv.slice(2);
// Twice the cores: a file waiting on its service or a child process leaves its core to another.
const concurrency = flags.some((flag) => flag.startsWith('--test-concurrency'))
  ? []
  : [`--test-concurrency=${Math.max(2, availableParallelism() * 2)}`];
const tests = spawn(
  process.execPath,
  [
    // Failures point at the TypeScript sources.
    '--enable-source-maps',
    '--test',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/file-durations-reporter.mjs',
    '--test-reporter-destination=/dev/null',
    ...concurrency,
    ...flags,
    ...files,
  ],
  { stdio: 'inherit' },
);
const testStatus = await new Promise((resolve) => tests.on('close', resolve));
const checksPassed = (await checks).every(Boolean);
process.exit(testStatus === 0 && checksPassed ? 0 : 1);
