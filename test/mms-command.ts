/**
 * `mms` as the tests run it: the command line from its sources through tsx, so that a test sees
 * the code as it is now rather than the last build. tsx's loader is named by its path, so that
 * the command starts from any working folder. From the repository root, tsx reads the root
 * tsconfig, whose `paths` send @model-messages/* to their sources; from a folder outside it,
 * packages resolve as they would for a user there. The compiled bin, as a user gets it, is what
 * test/packages.test.ts installs and runs.
 *
 * `spawn(process.execPath, [...MMS, 'serve', ...])`.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MMS = [
  '--import',
  import.meta.resolve('tsx'),
  fileURLToPath(new URL('../packages/server/src/cli/main.ts', import.meta.url)),
];

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
