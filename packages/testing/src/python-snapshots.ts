/**
 * Where the tests keep the code execution sandbox's Python snapshot between runs
 * (`codeExecution.snapshotFolder`): <repo>/.cache/python-snapshots, beside the tiny models, never
 * the home folder the service defaults to. Every test that runs real sandboxes names it, so the
 * snapshot is made once per checkout (and again only when pyodide or the sandbox child changes).
 */
import { join } from 'node:path';
import { REPOSITORY_ROOT } from './repository-root.js';

export const TEST_SNAPSHOT_FOLDER = join(REPOSITORY_ROOT, '.cache', 'python-snapshots');
