#!/usr/bin/env node
// The `mms` command: the compiled command line in dist/, plain JavaScript, so that nothing
// compiles TypeScript at run time. A published package holds dist/; in this repository `npm ci`
// builds it (the root `prepare` script), as does `npm run build` after a change. The tests run
// the same command from its sources (test/mms-command.ts).
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('mms: the command is not built: run `npm run build` at the root of the repository\n');
  process.exit(2);
}
await import(main.href);
