/**
 * How the kernel bounds a sandbox's memory, chosen once per runner. A watchdog alone is a poll:
 * one on the service's event loop let a program grow to 2.9 GB against a 512 MB limit while
 * the loop was busy (issue 16). In order of preference:
 *
 * 1. A cgroup of its own per sandbox in `codeExecution.cgroupFolder` (sandbox-cgroup.ts):
 *    memory.max counts resident memory and the OOM killer acts at the limit itself.
 * 2. Its address space (RLIMIT_AS, set by prlimit at spawn): past it every mapping fails, so
 *    Python's heap cannot grow (a MemoryError), an ArrayBuffer made through `import js` fails
 *    with a RangeError, and V8 aborts when its own heap cannot grow. The limit is what a loaded
 *    sandbox maps (Node, V8, pyodide, and the WebAssembly memory reserved whole at memoryMb,
 *    sandbox-command.ts) plus memoryMb again for what code allocates through JavaScript. What
 *    it maps is measured, on one sandbox that the runner loads for that and then ends, because
 *    it changes with Node's and pyodide's versions and the machine (1.1 GB besides the
 *    WebAssembly memory with Node 20.20 and pyodide 314). It is set at spawn, not after
 *    loading, because changing another process's limit needs CAP_SYS_RESOURCE once the child
 *    runs as another user, and containers often drop that capability.
 * 3. Neither (no cgroup folder, no prlimit): said once in the log.
 *
 * In every case V8 caps Python's heap at memoryMb, and the watchdog (memory-watchdog.ts) kills
 * a sandbox whose resident memory passes memoryMb, off the main thread.
 */
import { cgroupFolderProblem } from './sandbox-cgroup.js';
import type { SandboxPlatform } from './sandbox-platform.js';

/**
 * What measuring needs of the sandbox it loads (a SandboxProcess): named here rather than
 * imported, since sandbox-process.ts imports this file's limit (issue 33: no import circles).
 */
export interface ProbeSandbox {
  readonly ready: Promise<void>;
  addressSpacePeakKb(): Promise<number>;
  dispose(): Promise<void>;
}

export type KernelMemoryLimit =
  { kind: 'cgroup'; folder: string } | { kind: 'address-space'; bytes: number } | { kind: 'none' };

const KIB = 1024;

export async function chooseKernelMemoryLimit(
  platform: SandboxPlatform,
  memoryMb: number,
  cgroupFolder: string | undefined,
  startProbe: () => ProbeSandbox,
): Promise<KernelMemoryLimit> {
  const problem = cgroupFolder === undefined ? undefined : await cgroupFolderProblem(cgroupFolder);
  if (cgroupFolder !== undefined && problem === undefined) return { kind: 'cgroup', folder: cgroupFolder };
  if (problem !== undefined)
    warn(
      `codeExecution.cgroupFolder cannot be used (${problem})${platform.prlimit ? "; each sandbox's address space is limited instead" : ''}`,
      'MMS_SANDBOX_NO_CGROUP',
    );
  if (platform.prlimit === undefined) {
    warn(
      "neither a cgroup (codeExecution.cgroupFolder) nor prlimit can limit a sandbox's memory here, so only the memory watchdog does, and a program can outgrow it between two of its reads",
      'MMS_SANDBOX_NO_MEMORY_LIMIT',
    );
    return { kind: 'none' };
  }
  const probe = startProbe();
  try {
    await probe.ready;
    return { kind: 'address-space', bytes: ((await probe.addressSpacePeakKb()) + memoryMb * KIB) * KIB };
  } catch (error) {
    warn(
      `the address space of a loaded sandbox could not be measured (${(error as Error).message}), so only the memory watchdog limits a sandbox's memory`,
      'MMS_SANDBOX_NO_MEMORY_LIMIT',
    );
    return { kind: 'none' };
  } finally {
    await probe.dispose();
  }
}

function warn(detail: string, code: string): void {
  process.emitWarning(`code execution: ${detail}`, { code });
}
