/**
 * `mms compare` is the calling client's command (the tier move check). The service neither
 * depends on nor imports the client (shared/ARCHITECTURE.md: server -> protocol <- client), so
 * the client is found at run time the way Node finds any package, from the working directory
 * up: the workspace root in this repository (`npx mms compare` there), the user's project when
 * both are installed. Where it is not installed, the command says so and exits 2.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Runs the client's command `specifier` (a module exporting `runCompareCommand`); resolves to the exit code. */
export async function runClientCommand(specifier: string, args: string[]): Promise<number> {
  let entry: string;
  try {
    entry = createRequire(join(process.cwd(), 'package.json')).resolve(specifier);
  } catch {
    process.stderr.write(
      `mms compare: it is the calling client's command, and @model-messages/client is not installed where this runs (${process.cwd()}); install @model-messages/client there, or run it from the repository root\n`,
    );
    return 2;
  }
  const { runCompareCommand } = (await import(pathToFileURL(entry).href)) as {
    runCompareCommand: (args: string[]) => Promise<number>;
  };
  return runCompareCommand(args);
}
