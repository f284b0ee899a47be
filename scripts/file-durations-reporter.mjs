// A node:test reporter that writes nothing to its destination: at the end of the run it records
// how long each test file's tests took (the sum of its top-level tests and suites) in
// .cache/test-durations.json, for scripts/run-tests.mjs to start the longest files first.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const RECORD = '.cache/test-durations.json';

export default async function* fileDurations(source) {
  const seconds = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (file === undefined || nesting !== 0) continue;
    seconds[file] = (seconds[file] ?? 0) + (details?.duration_ms ?? 0) / 1000;
  }
  let earlier = {};
  try {
    earlier = JSON.parse(readFileSync(RECORD, 'utf8'));
  } catch {
    // No record yet, or an unreadable one: this run's stands alone.
  }
  mkdirSync('.cache', { recursive: true });
  // Files this run did not run (a run of some files only) keep their earlier time.
  writeFileSync(RECORD, `${JSON.stringify({ ...earlier, ...seconds }, null, 2)}\n`);
}
