/**
 * Pyodide's memory snapshot: the wasm memory after Python has started and the sandbox prelude
 * has run. A sandbox that loads from it is ready in well under a second instead of several
 * (measured in docs/benchmarks.md), which makes a cold start cheap and refilling the pool
 * cheaper still.
 *
 * It is made by a sandbox child of its own (the same walls; it runs no program, so nothing
 * untrusted has touched the image), and kept between starts in the snapshot cache
 * (snapshot-cache.ts) under a key of everything it is made from, so a later start, or another
 * runner, copies it instead of making it again. Each runner reads its own copy, in a folder the
 * service owns, which sandboxes may read but not write; the cache folder itself is the
 * service's alone.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  describeStartFailure,
  killSandbox,
  sandboxCommand,
  sandboxSpawnOptions,
  type CommandLimits,
  type SandboxPaths,
} from './sandbox-command.js';
import type { SandboxPlatform } from './sandbox-platform.js';
import { snapshotKey, type SnapshotCache } from './snapshot-cache.js';

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
  cache?: SnapshotCache,
): Promise<PythonSnapshot> {
  const folder = mkdtempSync(join(tmpdir(), 'mms-python-snapshot-'));
  const snapshot = { file: join(folder, SNAPSHOT_NAME), remove: () => rm(folder, { recursive: true, force: true }) };
  try {
    const key = cache === undefined ? undefined : await snapshotKey({ ...paths, memoryMb: limits.memoryMb });
    const copied = key !== undefined && (await cache!.copyOut(key, snapshot.file));
    if (!copied) {
      await makeInChild(platform, limits, paths, signal, snapshot.file);
      // A cache that cannot take it costs the next start the making, nothing else.
      await cache?.store(key!, snapshot.file).catch((error: Error) =>
        process.emitWarning(`code execution: the Python snapshot was not kept: ${error.message}`, {
          code: 'MMS_SANDBOX_SNAPSHOT_NOT_KEPT',
        }),
      );
    }
    // Sandboxes run as another user where the service is root: they may read it, not change it.
    chmodSync(snapshot.file, 0o444);
    chmodSync(folder, 0o755);
    return snapshot;
  } catch (error) {
    await snapshot.remove();
    throw error;
  }
}

/** Makes a snapshot in a sandbox child of its own and copies it to `destination`. */
async function makeInChild(
  platform: SandboxPlatform,
  limits: CommandLimits,
  paths: SandboxPaths,
  signal: AbortSignal,
  destination: string,
): Promise<void> {
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
    const kill = () => killSandbox(child);
    const timer = setTimeout(kill, limits.startTimeoutMs);
    signal.addEventListener('abort', kill, { once: true });
    // A runner closed before the child started: its listener would never hear the abort.
    if (signal.aborted) kill();
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
    copyFileSync(join(work, SNAPSHOT_NAME), destination);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
