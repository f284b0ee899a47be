import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killSandbox, sandboxCommand, sandboxSpawnOptions } from '../src/tools/code-execution/sandbox-command.js';

const platform = { namespaces: ['/usr/bin/unshare', '--net'], user: undefined, prlimit: '/usr/bin/prlimit' };
const limits = { timeoutMs: 1_000, startTimeoutMs: 2_000, maxFileBytes: 4096, memoryMb: 300 };
const paths = { pyodideFolder: '/pyodide', childScript: '/child.mjs' };

test("V8 caps the WebAssembly memory at the limit, without the trap handler's 10 GB reservation", () => {
  const command = sandboxCommand(platform, limits, paths, '/work', ['run']);
  assert.ok(command.includes(`--wasm-max-mem-pages=${300 * 16}`), command.join(' '));
  assert.ok(
    command.some((part) => /^--(disable|no)-wasm-trap-handler$/.test(part)),
    command.join(' '),
  );
});

test('an address-space limit goes to prlimit, soft and hard', () => {
  const command = sandboxCommand(platform, limits, paths, '/work', ['run'], { addressSpaceBytes: 2_000_000_000 });
  assert.ok(command.indexOf('--as=2000000000:2000000000') > command.indexOf('/usr/bin/prlimit'), command.join(' '));
});

test('a cgroup is entered by the first process, before the namespace launcher runs', () => {
  const command = sandboxCommand(platform, limits, paths, '/work', ['run'], { cgroup: '/sys/fs/cgroup/mms/sandbox-1' });
  assert.deepEqual(command.slice(0, 5), [
    '/bin/sh',
    '-c',
    'echo $$ > "$0/cgroup.procs" && exec "$@"',
    '/sys/fs/cgroup/mms/sandbox-1',
    '/usr/bin/unshare',
  ]);
});

test('killSandbox kills every process of the child, not only the one spawned', { timeout: 20_000 }, async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-kill-'));
  try {
    // As unshare forks the sandbox: a second process that holds the same pipes.
    const child = spawn('/bin/sh', ['-c', 'sleep 60 & echo started; exec sleep 60'], {
      ...sandboxSpawnOptions({ namespaces: undefined, user: undefined, prlimit: undefined }, folder),
      env: { PATH: '/usr/bin:/bin' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    await once(child.stdout!, 'data');
    const closed = once(child, 'close');
    killSandbox(child);
    // 'close' waits for every holder of the child's pipes: killing the spawned process alone
    // leaves the background sleep holding stdout for a minute, past this test's timeout.
    const [, signal] = await closed;
    assert.equal(signal, 'SIGKILL');
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
