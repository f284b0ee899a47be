/**
 * The Claude Code CLI for tests and checks that drive it: installed from the npm registry, at one
 * version, into the repository's `.cache/` (beside the tiny test models), once per version. The
 * suite runs the pinned version, whose requests are recorded in fixtures/claude-code/;
 * `npm run check:claude-code -- --version <v|latest>` runs another (issue 34). Where it cannot be
 * installed (no registry, a platform without its native binary) the caller is told why, so that
 * it skips with that message rather than failing.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPOSITORY_ROOT } from './repository-root.js';

/** The version whose requests are recorded in fixtures/claude-code/, which the suite runs. */
export const CLAUDE_CODE_VERSION = '2.1.332';

const PACKAGE = '@anthropic-ai/claude-code';

/** Longest an install may take: the package is a ~400 MB native binary. */
const INSTALL_TIMEOUT_MS = 300_000;

export type ClaudeCodeCli = { path: string; version: string } | { unavailable: string };

/** `version`: an exact version, or `latest`, which the registry resolves first. */
export async function claudeCodeCli(version: string = CLAUDE_CODE_VERSION): Promise<ClaudeCodeCli> {
  let exact = version;
  if (version === 'latest') {
    const view = await run('npm', ['view', PACKAGE, 'version'], REPOSITORY_ROOT, 60_000);
    if (view.status !== 0)
      return { unavailable: `npm could not say which ${PACKAGE} is the latest: ${view.output.slice(-400)}` };
    exact = view.output.trim();
  }
  const folder = join(REPOSITORY_ROOT, '.cache', `claude-code-${exact}`);
  const path = join(folder, 'node_modules', '.bin', 'claude');
  if (existsSync(path) && (await runs(path, folder, exact))) return { path, version: exact };
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'package.json'), '{"private": true}\n');
  const install = await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--no-save', `${PACKAGE}@${exact}`],
    folder,
    INSTALL_TIMEOUT_MS,
  );
  if (install.status !== 0)
    return { unavailable: `npm could not install ${PACKAGE}@${exact}: ${install.output.slice(-400)}` };
  if (!(await runs(path, folder, exact)))
    return { unavailable: `${PACKAGE}@${exact} installed but does not run on this platform` };
  return { path, version: exact };
}

export interface ClaudeCodeRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `claude -p PROMPT ...args` as a user runs it offline against `baseURL`: a fresh home, stdin
 * closed, no telemetry or other traffic but the API's.
 */
export async function runClaudeCode(
  cli: { path: string },
  options: {
    prompt: string;
    args?: string[];
    cwd: string;
    baseURL: string;
    apiKey: string;
    env?: Record<string, string>;
  },
): Promise<ClaudeCodeRun> {
  const child = spawn(cli.path, ['-p', options.prompt, ...(options.args ?? [])], {
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
    env: {
      PATH: process.env.PATH,
      HOME: mkdtempSync(join(tmpdir(), 'mms-claude-code-home-')),
      ANTHROPIC_BASE_URL: options.baseURL,
      ANTHROPIC_API_KEY: options.apiKey,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      ...options.env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stdout, stderr };
}

async function runs(path: string, folder: string, version: string): Promise<boolean> {
  const result = await run(path, ['--version'], folder, 30_000);
  return result.status === 0 && result.output.includes(version);
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
