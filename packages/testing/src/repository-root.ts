/**
 * The repository's root folder, for what the tests keep in its `.cache/` (tiny models, the
 * Claude Code CLI). Found through package.json's real path: `npm test` runs the tests compiled
 * under .cache/compiled/ (scripts/compile-tests.mjs), where package.json is a link to this one.
 */
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPOSITORY_ROOT = dirname(realpathSync(fileURLToPath(new URL('../../../package.json', import.meta.url))));
