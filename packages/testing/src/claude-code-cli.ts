/**
 * The Claude Code CLI for tests that drive it: installed from the npm registry, at one pinned
 * version, into the repository's `.cache/` (beside the tiny test models), once. Where it cannot
 * be installed (no registry, a platform without its native binary) the caller is told why, so
 * that it skips with that message rather than failing.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPOSITORY_ROOT } from './repository-root.js';

/** The version whose requests are recorded in fixtures/claude-code/. */
export const CLAUDE_CODE_VERSION = '2.1.332';

const INSTALL_FOLDER = join(REPOSITORY_ROOT, '.cache', `claude-code-${CLAUDE_CODE_VERSION}`);

/** Longest an install may take: the package is a ~400 MB native binary. */
const INSTALL_TIMEOUT_MS = 300_000;

export type ClaudeCodeCli = { path: string } | { unavailable: string };

export async function claudeCodeCli(): Promise<ClaudeCodeCli> {
  const path = join(INSTALL_FOLDER, 'node_modules', '.bin', 'claude');
  if (existsSync(path) && (await runs(path))) return { path };
  await mkdir(INSTALL_FOLDER, { recursive: true });
  await writeFile(join(INSTALL_FOLDER, 'package.json'), '{"private": true}\n');
  const install = await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--no-save', `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`],
    INSTALL_FOLDER,
    INSTALL_TIMEOUT_MS,
  );
  if (install.status !== 0)
    return {
      unavailable: `npm could not install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}: ${install.output.slice(-400)}`,
    };
  if (!(await runs(path)))
    return {
      unavailable: `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} installed but does not run on this platform`,
    };
  return { path };
}

async function runs(path: string): Promise<boolean> {
  const result = await run(path, ['--version'], INSTALL_FOLDER, 30_000);
  return result.status === 0 && result.output.includes(CLAUDE_CODE_VERSION);
}

function run(
  command: string,
  args: string[],
  cwd: string,
  timeout: number,
): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout });
    let output = '';
    child.stdout.on('data', (chunk) => (output += String(chunk)));
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    child.on('error', (error) => resolve({ status: null, output: String(error) }));
    child.on('close', (status) => resolve({ status, output }));
  });
}
