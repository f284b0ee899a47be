/**
 * What this host lets the sandbox use, found once per service process by trying it:
 * - `unshare`: a network namespace (no interface but a down loopback: no network at all) and a
 *   PID namespace (the child sees no other process, so it cannot signal the service or a
 *   sibling sandbox). As root the child also drops to `nobody`; otherwise a user namespace
 *   makes the unprivileged unshare possible where the kernel allows it.
 * - `prlimit`: a kernel CPU-time limit, file size limit, no core dumps, and the address-space
 *   limit that bounds memory where no cgroup does (kernel-memory-limit.ts).
 * Where either is missing the sandbox still runs, after one warning that says what is lost.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** The user a root service runs sandboxes as: nobody owns nothing the service cares about. */
const NOBODY = 65534;

export interface SandboxPlatform {
  /** `unshare` and its arguments before the command, or undefined where the OS refuses namespaces. */
  namespaces: string[] | undefined;
  /** The user the child runs as, when the service runs as root; its working folder is given to it. */
  user: { uid: number; gid: number } | undefined;
  /** The path of `prlimit`, or undefined: then only the wall clock bounds the child. */
  prlimit: string | undefined;
}

let detected: Promise<SandboxPlatform> | undefined;

/** The platform, probed on first use and then remembered. */
export function sandboxPlatform(): Promise<SandboxPlatform> {
  detected ??= detect();
  return detected;
}

async function detect(): Promise<SandboxPlatform> {
  // Absolute paths: the child's environment is empty, so it has no PATH to search.
  const prlimitPath = executable('prlimit');
  const unsharePath = executable('unshare');
  const prlimit =
    prlimitPath !== undefined && (await succeeds(prlimitPath, ['--cpu=60', '--', process.execPath, '-e', '']))
      ? prlimitPath
      : undefined;
  const root = process.getuid?.() === 0;
  const user = root ? { uid: NOBODY, gid: NOBODY } : undefined;
  const base = ['--net', '--pid', '--fork', '--kill-child'];
  const candidate = root ? [...base, `--setuid=${NOBODY}`, `--setgid=${NOBODY}`] : ['--map-root-user', ...base];
  const works =
    unsharePath !== undefined && (await succeeds(unsharePath, [...candidate, '--', process.execPath, '-e', '']));
  const namespaces = works ? [unsharePath, ...candidate] : undefined;
  if (!namespaces) {
    process.emitWarning(
      "code execution: unshare could not create network and PID namespaces here, so sandboxed code can reach the network and signal processes of the service's user. Run the service as root, or where unprivileged user namespaces are enabled, to close that.",
      { code: 'MMS_SANDBOX_NO_NAMESPACES' },
    );
  }
  if (!prlimit)
    process.emitWarning(
      'code execution: prlimit is missing, so there is no kernel CPU-time or file-size limit; the wall-clock limit still kills runaway code.',
      { code: 'MMS_SANDBOX_NO_PRLIMIT' },
    );
  // Without unshare a root service can still drop the child's user through spawn itself.
  return { namespaces, user, prlimit };
}

function executable(name: string): string | undefined {
  for (const folder of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(delimiter)) {
    const path = join(folder, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

function succeeds(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore', env: {}, cwd: tmpdir() });
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}
