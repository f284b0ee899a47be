/**
 * A cgroup v2 of its own for each sandbox, inside the folder the operator delegated to the
 * service (`codeExecution.cgroupFolder`), with memory.max at memoryMb: the kernel's limit on
 * the sandbox's memory. It counts resident memory (and page cache), not address space, and
 * the kernel's OOM killer ends the whole group the moment it is reached, whatever the
 * service's threads are doing; memory.events says afterwards that it did.
 *
 * Only a folder the operator names is used: a root service can write every cgroup, so that a
 * folder is writable says nothing about its being delegated, and each part of the cgroup tree
 * has one writer (systemd, for most of it). docs/deployment.md says how to delegate one.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const MIB = 1024 * 1024;
/** The kernel frees a group some moments after its last process exits; until then rmdir is EBUSY. */
const REMOVE_ATTEMPTS = 40;
const REMOVE_RETRY_MS = 25;

export class SandboxCgroup {
  private constructor(readonly folder: string) {}

  /** Makes one sandbox's cgroup; its launcher enters it before anything else runs (sandbox-command.ts). */
  static create(parent: string, memoryMb: number): SandboxCgroup {
    const folder = join(parent, `mms-sandbox-${randomUUID()}`);
    mkdirSync(folder);
    try {
      writeFileSync(join(folder, 'memory.max'), String(memoryMb * MIB));
      // With swap it would go on past memory.max, only slower, rather than be stopped there.
      if (existsSync(join(folder, 'memory.swap.max'))) writeFileSync(join(folder, 'memory.swap.max'), '0');
      // The OOM killer takes the launcher with the node process: the sandbox dies whole.
      writeFileSync(join(folder, 'memory.oom.group'), '1');
    } catch (error) {
      rmdirSync(folder);
      throw error;
    }
    return new SandboxCgroup(folder);
  }

  /** Whether the kernel's OOM killer ended a process in it; final once the sandbox is gone. */
  async oomKilled(): Promise<boolean> {
    const events = await readFile(join(this.folder, 'memory.events'), 'utf8').catch(() => '');
    return oomKills(events) > 0;
  }

  /** Removes the folder once the kernel counts the group empty. */
  async remove(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await rmdir(this.folder);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return;
        if (code !== 'EBUSY' || attempt === REMOVE_ATTEMPTS) throw error;
        await sleep(REMOVE_RETRY_MS);
      }
    }
  }
}

/** The `oom_kill` count of a memory.events file. */
export function oomKills(memoryEvents: string): number {
  return Number(/^oom_kill (\d+)$/m.exec(memoryEvents)?.[1] ?? 0);
}

/** Why `folder` cannot hold sandbox cgroups, or undefined when it can: checked by making one. */
export async function cgroupFolderProblem(folder: string): Promise<string | undefined> {
  const enabled = await readFile(join(folder, 'cgroup.subtree_control'), 'utf8').catch(() => undefined);
  if (enabled === undefined) return `${folder} is not a cgroup v2 folder`;
  if (!enabled.split(/\s+/).includes('memory'))
    return `the memory controller is not enabled for the children of ${folder} (its cgroup.subtree_control)`;
  try {
    await SandboxCgroup.create(folder, 1).remove();
  } catch (error) {
    return `a cgroup cannot be made in ${folder}: ${(error as Error).message}`;
  }
  return undefined;
}
