/**
 * Pyodide's memory snapshot: the wasm memory after Python has started and the sandbox prelude
 * has run. A sandbox that loads from it is ready in well under a second instead of several
 * (measured in docs/benchmarks.md), which makes a cold start cheap and refilling the pool
 * cheaper still.
 *
 * It is made once per runner by a sandbox child of its own (the same walls; it runs no
 * program, so nothing untrusted has touched the image), then copied into a folder the service
 * owns, which sandboxes may read but not write. It lives as long as the runner: no cache on
 * disk can go stale against an upgraded pyodide.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  describeStartFailure,
  sandboxCommand,
  sandboxSpawnOptions,
  type CommandLimits,
  type SandboxPaths,
} from './sandbox-command.js';
import type { SandboxPlatform } from './sandbox-platform.js';

const SNAPSHOT_NAME = 'python.snapshot';
/** The image is some tens of megabytes; the sandbox's file size limit is for programs, not for it. */
const MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024;
/** Enough of a failed child's stderr to say why. */
const KEPT_STDERR_CHARACTERS = 2_000;

export interface PythonSnapshot {
  file: string;
  remove(): Promise<void>;
}

export async function makePythonSnapshot(
  platform: SandboxPlatform,
  limits: CommandLimits,
  paths: SandboxPaths,
  signal: AbortSignal,
): Promise<PythonSnapshot> {
  const work = mkdtempSync(join(tmpdir(), 'mms-snapshot-work-'));
  try {
    if (platform.user) chownSync(work, platform.user.uid, platform.user.gid);
    const [command, ...args] = sandboxCommand(
      platform,
      { ...limits, maxFileBytes: MAX_SNAPSHOT_BYTES },
      { pyodideFolder: paths.pyodideFolder, childScript: paths.childScript },
      work,
      ['make-snapshot'],
    );
    const child = spawn(command!, args, {
      ...sandboxSpawnOptions(platform, work),
      stdio: ['pipe', 'ignore', 'pipe', 'ignore'],
    });
    let stderr = '';
    child.stderr!.on(
      'data',
      (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-KEPT_STDERR_CHARACTERS)),
    );
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(kill, limits.startTimeoutMs);
    signal.addEventListener('abort', kill, { once: true });
    const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      child.on('error', (error) => resolve({ code: null, signal: error.message }));
      child.on('close', (code, exitSignal) => resolve({ code, signal: exitSignal }));
    });
    clearTimeout(timer);
    signal.removeEventListener('abort', kill);
    if (exit.code !== 0)
      throw new Error(
        `making the Python snapshot failed (${exit.signal ?? `code ${exit.code}`}): ${describeStartFailure(stderr)}`,
      );
    // Copied rather than moved: the copy belongs to the service, not to the sandbox user.
    const folder = mkdtempSync(join(tmpdir(), 'mms-python-snapshot-'));
    const file = join(folder, SNAPSHOT_NAME);
    copyFileSync(join(work, SNAPSHOT_NAME), file);
    chmodSync(file, 0o444);
    chmodSync(folder, 0o755);
    return { file, remove: () => rm(folder, { recursive: true, force: true }) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
