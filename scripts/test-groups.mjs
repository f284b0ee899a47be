// Which test files share a process in `npm test`, and in what order the processes start.
//
// Why: node's test runner starts one process per file, and a file that only checks a few
// functions spent most of its CPU loading the service's modules (measured on 2 cores: 20 short
// files, 17.1 s of CPU one process each, 5.4 s in one process; the same 142 tests passed). So
// the short files run in groups of about GROUP_SECONDS each: one process imports them one after
// another, and node's test runner, in that process, runs their tests in order.
//
// Each file of a group is one suite named after it (scripts/test-api.mjs), its top-level hooks
// its own; a file alone in its process is one too. What stays alone: a long file (its own process
// runs beside the others), and a file that changes what every file in its process would see
// (process.env, process listeners, mock timers, a global provider).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { COMPILED } from './compile-tests.mjs';

const RECORD = '.cache/test-durations.json';
/**
 * Times of a past run (paths relative to the repository), for the files this checkout has not
 * recorded yet: a clean clone, as CI runs, would otherwise count every file as UNKNOWN_SECONDS
 * and pack the longest files into one group. Refresh it from .cache/test-durations.json now and
 * then; it only decides the grouping and the order.
 */
const SEED = new URL('./test-durations-seed.json', import.meta.url);
const GROUPS_FOLDER = '.cache/test-groups';

/**
 * A file recorded this long or longer runs alone; the times are wall times inside `npm test`,
 * about twice a file's own. Larger groups start fewer processes, each loading the service (and
 * node-llama-cpp, which tests its binary at every load) once: against 8 s and 15 s, these took
 * 27 processes instead of 36 and 288 and 313 s of CPU against 325 s, in alternated runs.
 */
const ALONE_SECONDS = 16;
/** What a group's files add up to, by the last run's times. */
const GROUP_SECONDS = 30;
/** A file without a recorded time (new, or a first run) counts as this long. */
const UNKNOWN_SECONDS = 2;

const CHANGES_PROCESS_STATE = /process\.env\b|process\.(on|once|prependListener)\(|mock\.timers|setGlobal\w*\(/;
/**
 * A file that loads llama.cpp. Each process that does pays for node-llama-cpp's check of its
 * binary (on Linux it forks a process that loads the binding first: about 1 s of CPU, 26 times in
 * a run when these files were spread over every group), so they are grouped among themselves and
 * share one runtime per process (llama-runtime.ts).
 */
const LOADS_LLAMA = /\b(llamaRuntime|getLlama|tinyLlamaModel|scriptedQwenModel)\(/;

function readTimes(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return {};
  }
}

/** This checkout's record over the seed, by absolute path. */
function recordedSeconds() {
  const seed = Object.entries(readTimes(SEED)).map(([file, seconds]) => [resolve(file), seconds]);
  return { ...Object.fromEntries(seed), ...readTimes(RECORD) };
}

/**
 * `tests`: [{ source, compiled }]. Returns the paths to hand to `node --test`, compiled files and
 * group entries, the longest first: started last, a long file alone kept the run going a minute.
 */
export function testProcesses(tests) {
  const seconds = recordedSeconds();
  const alone = [];
  const grouped = [];
  for (const test of tests) {
    // Recorded under the TypeScript source's path: the runner reports through the source maps.
    const time = seconds[resolve(test.source)] ?? UNKNOWN_SECONDS;
    const source = readFileSync(test.source, 'utf8');
    if (time >= ALONE_SECONDS || CHANGES_PROCESS_STATE.test(source)) alone.push({ paths: [test], time });
    else grouped.push({ test, time, llama: LOADS_LLAMA.test(source) });
  }
  // First fit, longest first: few groups, each about GROUP_SECONDS, llama.cpp's files apart.
  const groups = [];
  for (const file of grouped.sort(
    (one, other) => other.time - one.time || one.test.source.localeCompare(other.test.source),
  )) {
    const group = groups.find(
      (candidate) => candidate.llama === file.llama && candidate.time + file.time <= GROUP_SECONDS,
    );
    if (group) {
      group.paths.push(file.test);
      group.time += file.time;
    } else groups.push({ paths: [file.test], time: file.time, llama: file.llama });
  }
  rmSync(GROUPS_FOLDER, { recursive: true, force: true });
  mkdirSync(GROUPS_FOLDER, { recursive: true });
  const processes = [...alone, ...groups].sort((one, other) => other.time - one.time);
  // A file alone gets an entry too: node:test takes the caller of test() for a test's file, which
  // for the compiled tests is scripts/test-api.mjs, so only the suite named after the file says
  // which file a test is in (scripts/file-durations-reporter.mjs records by it).
  return processes.map((process, index) => {
    const entry = join(GROUPS_FOLDER, `group-${String(index + 1).padStart(3, '0')}.test.mjs`);
    const imports = process.paths.map(
      ({ compiled, source }) =>
        `await importIntoGroup(${JSON.stringify(pathToFileURL(compiled).href)}, ${JSON.stringify(source)});`,
    );
    const api = JSON.stringify(pathToFileURL(join(COMPILED, 'scripts', 'test-api.mjs')).href);
    writeFileSync(
      entry,
      `// Test files in one process (scripts/test-groups.mjs).\nimport { importIntoGroup } from ${api};\n${imports.join('\n')}\n`,
    );
    return entry;
  });
}
