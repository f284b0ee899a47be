#!/usr/bin/env node
// The `mms` command. The sources are TypeScript, run through tsx's loader: no build step.
// `mms compare` belongs to the calling client (the tier move check); it is dispatched here, at
// the command's entry, so that the service's own code never imports the client.
import { register } from 'tsx/esm/api';

register();
if (process.argv[2] === 'compare') {
  const { runCompareCommand } = await import('@mms/client/compare-command');
  process.exitCode = await runCompareCommand(process.argv.slice(3));
} else {
  await import('../src/cli/main.ts');
}
