/**
 * The command line of a sandbox child: its cgroup (when it has one, sandbox-cgroup.ts), the
 * namespace launcher (unshare), the kernel limits (prlimit), then Node with the permission
 * model on, allowed to read pyodide, its own script, the Python snapshot and its working
 * folder, and to write only its working folder. Not allowed: any other file, child processes,
 * worker threads, native addons.
 */
import type { ChildProcess } from 'node:child_process';
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
  memoryMb: number;
}

/**
 * Node 20 and 21 know the permission model as `--experimental-permission`; from 22.13 and 23.5
 * it is `--permission`, and Node 24 dropped the old name. Asked of the running Node, which is
 * the one the child runs on (process.execPath).
 */
export const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission')
  ? '--permission'
  : '--experimental-permission';

/**
 * V8 reserves 10 GB of address space per WebAssembly memory to check its bounds with guard
 * pages, and otherwise the memory's declared maximum (4 GB for pyodide). Either leaves no room
 * for an address-space limit anywhere near memoryMb (kernel-memory-limit.ts), so the trap
 * handler is off (bounds are checked in the code instead; no slower that we could measure)
 * and the memory's maximum is memoryMb: Python's heap can never grow past the limit, and
 * growing past it is a MemoryError in Python. Node before 20.15 lacks the Node option; V8's
 * own flag does the same there.
 */
const TRAP_HANDLER_OFF = process.allowedNodeEnvironmentFlags.has('--disable-wasm-trap-handler')
  ? '--disable-wasm-trap-handler'
  : '--no-wasm-trap-handler';
/** A WebAssembly page is 64 KiB. */
const WASM_PAGES_PER_MB = 16;

/** Enters the cgroup folder given as $0, then runs the rest: the child and all it starts are in it from their start. */
const ENTER_CGROUP = 'echo $$ > "$0/cgroup.procs" && exec "$@"';

/** The kernel's hold on one sandbox's memory (kernel-memory-limit.ts): its own cgroup, or an address-space limit. */
export interface SandboxMemory {
  cgroup?: string;
  addressSpaceBytes?: number;
}

export function sandboxCommand(
  platform: SandboxPlatform,
  limits: CommandLimits,
  paths: SandboxPaths,
  folder: string,
  mode: string[],
  memory: SandboxMemory = {},
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
    TRAP_HANDLER_OFF,
    `--wasm-max-mem-pages=${limits.memoryMb * WASM_PAGES_PER_MB}`,
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
        ...(memory.addressSpaceBytes === undefined
          ? []
          : [`--as=${memory.addressSpaceBytes}:${memory.addressSpaceBytes}`]),
        '--',
        ...node,
      ]
    : node;
  const launched = platform.namespaces ? [...platform.namespaces, '--', ...limited] : limited;
  return memory.cgroup === undefined ? launched : ['/bin/sh', '-c', ENTER_CGROUP, memory.cgroup, ...launched];
}

/**
 * Spawn options shared by every sandbox child: an empty environment, its folder as cwd, and a
 * process group of its own (`detached`), which killSandbox kills whole.
 */
export function sandboxSpawnOptions(
  platform: SandboxPlatform,
  folder: string,
): { env: Record<string, string>; cwd: string; detached: true; uid?: number; gid?: number } {
  // Without unshare a root service still drops the child's user through spawn itself.
  return {
    env: {},
    cwd: folder,
    detached: true,
    ...(platform.namespaces === undefined && platform.user ? platform.user : {}),
  };
}

/**
 * Kills a sandbox child spawned with sandboxSpawnOptions and every process in its group at once.
 * Killing only the spawned process is not enough: unshare's forked child, the sandbox itself,
 * gets its parent-death signal (`--kill-child`) cleared by the kernel when unshare then changes
 * its user (`--setuid`), so a sandbox killed while it loads went on loading Python for seconds.
 */
export function killSandbox(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) {
      process.kill(-child.pid, 'SIGKILL');
      return;
    }
  } catch {
    // The group is gone already, or was never made: the child alone, below.
  }
  child.kill('SIGKILL');
}

/** One line on why a child failed to start: its own `sandbox failure:` line, else its last words. */
export function describeStartFailure(stderr: string): string {
  const lines = stderr.trim().split('\n');
  return lines.find((line) => line.startsWith('sandbox failure:')) ?? (lines.slice(-3).join(' | ') || 'no output');
}
