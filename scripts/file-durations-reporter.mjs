// A node:test reporter that writes nothing to its destination: at the end of the run it records
// how long each test file's tests took (the sum of its top-level tests and suites) in
// .cache/test-durations.json, for scripts/test-groups.mjs to group the short files and start the
// longest first.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const RECORD = '.cache/test-durations.json';

export default async function* fileDurations(source) {
  const seconds = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, name, nesting, details } = event.data;
    if (file === undefined || nesting !== 0) continue;
    // A file run in a group is one suite named after its source (scripts/test-api.mjs).
    const source = file.endsWith('/scripts/test-api.mjs') ? resolve(name) : file;
    seconds[source] = (seconds[source] ?? 0) + (details?.duration_ms ?? 0) / 1000;
  }
  let earlier = {};
  try {
    earlier = JSON.parse(readFileSync(RECORD, 'utf8'));
  } catch {
    // No record yet, or an unreadable one: this run's stands alone.
  }
  mkdirSync('.cache', { recursive: true });
  // Files this run did not run (a run of some files only) keep their earlier time; files that are
  // gone leave the record.
  const record = Object.fromEntries(Object.entries({ ...earlier, ...seconds }).filter(([file]) => existsSync(file)));
  writeFileSync(RECORD, `${JSON.stringify(record, null, 2)}\n`);
}
