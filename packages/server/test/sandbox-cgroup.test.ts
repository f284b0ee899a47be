import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupFolderProblem, oomKills, SandboxCgroup } from '../src/tools/code-execution/sandbox-cgroup.js';

/** A plain folder that looks like a cgroup with `controllers` enabled for its children. */
function fakeCgroupFolder(controllers: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'mms-fake-cgroup-'));
  writeFileSync(join(folder, 'cgroup.subtree_control'), `${controllers}\n`);
  return folder;
}

test('memory.events: the oom_kill count, 0 when absent', () => {
  assert.equal(oomKills('low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 1\n'), 1);
  assert.equal(oomKills(''), 0);
});

test('a folder that is not a cgroup, or whose children lack the memory controller, is refused with the reason', async () => {
  const plain = mkdtempSync(join(tmpdir(), 'mms-not-cgroup-'));
  const withoutMemory = fakeCgroupFolder('cpu pids');
  try {
    assert.equal(await cgroupFolderProblem(plain), `${plain} is not a cgroup v2 folder`);
    assert.equal(
      await cgroupFolderProblem(withoutMemory),
      `the memory controller is not enabled for the children of ${withoutMemory} (its cgroup.subtree_control)`,
    );
  } finally {
    rmSync(plain, { recursive: true });
    rmSync(withoutMemory, { recursive: true });
  }
});

test("a sandbox's cgroup gets memory.max at the limit and the OOM killer takes the group whole", () => {
  const parent = fakeCgroupFolder('cpu memory');
  try {
    const cgroup = SandboxCgroup.create(parent, 300);
    assert.equal(readFileSync(join(cgroup.folder, 'memory.max'), 'utf8'), String(300 * 1024 * 1024));
    assert.equal(readFileSync(join(cgroup.folder, 'memory.oom.group'), 'utf8'), '1');
  } finally {
    rmSync(parent, { recursive: true });
  }
});
