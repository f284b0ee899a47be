/**
 * The command line of a sandbox child: the namespace launcher (unshare), the kernel limits
 * (prlimit), then Node with the permission model on, allowed to read pyodide, its own script,
 * the Python snapshot and its working folder, and to write only its working folder. Not allowed:
 * any other file, child processes, worker threads, native addons.
 */
import type { SandboxPlatform } from './sandbox-platform.js';

export interface SandboxPaths {
  pyodideFolder: string;
  childScript: string;
  /** A memory snapshot of pyodide after start-up (python-snapshot.ts), when one was made. */
  snapshotFile?: string;
}

export interface CommandLimits {
  timeoutMs: number;
  startTimeoutMs: number;
  maxFileBytes: number;
}

/**
 * Node 20 and 21 know the permission model as `--experimental-permission`; from 22.13 and 23.5
 * it is `--permission`, and Node 24 dropped the old name. Asked of the running Node, which is
 * the one the child runs on (process.execPath).
 */
export const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission')
  ? '--permission'
  : '--experimental-permission';

export function sandboxCommand(
  platform: SandboxPlatform,
  limits: CommandLimits,
  paths: SandboxPaths,
  folder: string,
  mode: string[],
): string[] {
  const readable = [
    paths.pyodideFolder,
    paths.childScript,
    folder,
    ...(paths.snapshotFile ? [paths.snapshotFile] : []),
  ];
  const node = [
    process.execPath,
    '--no-warnings',
    PERMISSION_FLAG,
    ...readable.map((path) => `--allow-fs-read=${path}`),
    `--allow-fs-write=${folder}`,
    paths.childScript,
    paths.pyodideFolder,
    folder,
    ...mode,
  ];
  // The kernel's CPU limit is the backstop behind the wall-clock deadline (which kills first):
  // start-up and execution budgets together, set at spawn, because narrowing it after start-up
  // (prlimit --pid) needs CAP_SYS_RESOURCE once the child has dropped its user.
  const cpuSeconds = Math.ceil((limits.startTimeoutMs + limits.timeoutMs) / 1000);
  const limited = platform.prlimit
    ? [
        platform.prlimit,
        `--cpu=${cpuSeconds}:${cpuSeconds}`,
        `--fsize=${limits.maxFileBytes}`,
        '--core=0',
        '--',
        ...node,
      ]
    : node;
  return platform.namespaces ? [...platform.namespaces, '--', ...limited] : limited;
}

/** Spawn options shared by every sandbox child: an empty environment, its folder as cwd. */
export function sandboxSpawnOptions(
  platform: SandboxPlatform,
  folder: string,
): { env: Record<string, string>; cwd: string; uid?: number; gid?: number } {
  // Without unshare a root service still drops the child's user through spawn itself.
  return { env: {}, cwd: folder, ...(platform.namespaces === undefined && platform.user ? platform.user : {}) };
}

/** One line on why a child failed to start: its own `sandbox failure:` line, else its last words. */
export function describeStartFailure(stderr: string): string {
  const lines = stderr.trim().split('\n');
  return lines.find((line) => line.startsWith('sandbox failure:')) ?? (lines.slice(-3).join(' | ') || 'no output');
}
