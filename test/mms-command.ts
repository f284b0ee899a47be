/**
 * `mms` as the tests run it: the compiled command (packages/server/bin/mms.js), the way a user
 * runs it. Compiled, a start costs about half the CPU of one through tsx, and the command-line
 * tests start it some forty times. So that a test still sees the code as it is now, the build
 * runs first when any source is newer than the last build (`npm test` has just built; a test file
 * run on its own after an edit rebuilds here, incrementally). test/packages.test.ts runs
 * the command as installed from the packed packages.
 *
 * `spawn(process.execPath, [...MMS, 'serve', ...])`.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The real root also when this file runs compiled from .cache/compiled/ (a mirror whose
// package.json is a link).
const ROOT = dirname(realpathSync(fileURLToPath(new URL('../package.json', import.meta.url))));

/** The newest modification time of the files under `folder`. */
function newestUnder(folder: string): number {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

// tsc -b rewrites a package's dist/.tsbuildinfo at every build, even one with nothing to emit.
const stale = ['protocol', 'server', 'client'].some((name) => {
  const built = statSync(join(ROOT, 'packages', name, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false });
  return built === undefined || built.mtimeMs < newestUnder(join(ROOT, 'packages', name, 'src'));
});
if (stale) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });

export const MMS = [join(ROOT, 'packages/server/bin/mms.js')];

/** The port a served `mms` (started with `stdio: pipe`) says it listens on, from its log. */
export async function listeningPort(child: ChildProcess): Promise<number> {
  let output = '';
  for await (const chunk of child.stdout!) {
    output += String(chunk);
    const match = output.match(/listening at http:\/\/127\.0\.0\.1:(\d+)/);
    if (match) return Number(match[1]);
  }
  throw new Error(`mms exited before listening: ${output}`);
}
