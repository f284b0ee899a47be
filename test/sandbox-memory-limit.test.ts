/**
 * A sandbox's memory is bounded by the kernel, not only by a watchdog that polls: each program
 * here allocates far past memoryMb in one step while the service's event loop is held busy by
 * a synchronous loop (as a flood of messages or a big request once held it), and is still
 * stopped near the limit. The busy loop starts as the program's first host call is answered
 * and lasts until the sandbox is gone, so nothing on the service's loop can act meanwhile; it
 * reads the sandbox's peak resident memory from /proc as it waits.
 *
 * These run where the kernel can limit a sandbox: prlimit (the address space) here, as no
 * cgroup folder is configured. Where prlimit is missing they skip.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { codeExecutionConfig } from '../packages/server/src/config/config-schema.js';
import { ChildProcessRunner } from '../packages/server/src/tools/code-execution/child-process-runner.js';
import type { RunOutcome } from '../packages/server/src/tools/code-execution/code-runner.js';
import { sandboxPlatform } from '../packages/server/src/tools/code-execution/sandbox-platform.js';

const NO_KERNEL_LIMIT =
  (await sandboxPlatform()).prlimit === undefined
    ? 'neither prlimit nor a cgroup folder is available here, so no kernel limit bounds sandbox memory'
    : false;
const LIMIT_MB = 400;
/** Far past the limit: what the program asks for in one step. */
const ASKED_MB = 1536;
/** The busy loop never outlasts this, even if the sandbox were never stopped. */
const LONGEST_BLOCK_MS = 60_000;

let runner: ChildProcessRunner;

before(() => {
  // Without a pool the execution's sandbox is the only one: the busy loop waits for it alone.
  runner = new ChildProcessRunner({
    ...codeExecutionConfig.parse({ poolSize: 0, memoryMb: LIMIT_MB, timeoutMs: 60_000 }),
  });
});

after(() => runner.close());

/** The sandboxes (their launchers) this process has started and that have not exited. */
function runningSandboxes(): number[] {
  const children = readdirSync('/proc/self/task').flatMap((task) =>
    readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  );
  return children.filter((pid) => {
    try {
      // A zombie (exited, not yet reaped by this blocked loop) has an empty command line.
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('sandbox-child.mjs');
    } catch {
      return false;
    }
  });
}

/** The peak resident memory of a process and its children, in MB. */
function peakMb(pid: number): number {
  const pids = [pid, ...readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)];
  let peakKb = 0;
  for (const each of pids) {
    const status = readFileSync(`/proc/${each}/status`, 'utf8');
    peakKb = Math.max(peakKb, Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0));
  }
  return peakKb / 1024;
}

/** Holds this event loop until every sandbox has exited; the largest peak seen among them. */
function blockUntilSandboxesEnd(): number {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const until = performance.now() + LONGEST_BLOCK_MS;
  let peak = 0;
  for (let running = runningSandboxes(); running.length > 0 && performance.now() < until;) {
    for (const pid of running) {
      try {
        peak = Math.max(peak, peakMb(pid));
      } catch {
        // exited between the listing and the reads
      }
    }
    Atomics.wait(pause, 0, 0, 5);
    running = runningSandboxes();
  }
  return peak;
}

/**
 * Runs `allocation` once the program's first call is answered, with the loop blocked from
 * then on; the outcome and the sandbox's peak resident memory.
 */
async function allocateWhileBlocked(allocation: string): Promise<{ outcome: RunOutcome; peakMb: number }> {
  let peak = 0;
  const outcome = await runner.run(`await web_fetch("https://example.com/")\n${allocation}`, {
    hostFunctions: [{ name: 'web_fetch', firstParameter: 'url' }],
    callHost: async () => {
      // Right after this answer is written, before the sandbox can act on it.
      setImmediate(() => (peak = blockUntilSandboxesEnd()));
      return { ok: true };
    },
    signal: new AbortController().signal,
  });
  return { outcome, peakMb: peak };
}

function assertStopped(outcome: RunOutcome, peak: number, error: RegExp): void {
  assert.ok(outcome.kind === 'exited' || outcome.kind === 'killed', JSON.stringify(outcome));
  if (outcome.kind !== 'exited' && outcome.kind !== 'killed') return;
  assert.doesNotMatch(outcome.stdout, /allocated/);
  assert.match(outcome.stderr, error);
  assert.ok(peak > 0, 'the sandbox was seen while the loop was blocked');
  assert.ok(peak < 2 * LIMIT_MB, `peak resident memory ${peak.toFixed(0)} MB against a limit of ${LIMIT_MB} MB`);
}

describe(
  'memory past the limit is refused by the kernel while the service loop is blocked',
  { skip: NO_KERNEL_LIMIT },
  () => {
    test(`Python asking for ${ASKED_MB} MB in one step gets a MemoryError near the ${LIMIT_MB} MB limit`, async () => {
      const { outcome, peakMb } = await allocateWhileBlocked(
        `block = b"x" * (${ASKED_MB} << 20)\nprint("allocated", len(block) >> 20, "MB")`,
      );
      assertStopped(outcome, peakMb, /MemoryError/);
    });

    test(`JavaScript (import js) asking for ${ASKED_MB} MB in one step fails on the address-space limit`, async () => {
      const { outcome, peakMb } = await allocateWhileBlocked(
        `import js\njs.eval("globalThis.block = new Uint8Array(${ASKED_MB} << 20).fill(1)")\nprint("allocated", js.block.length >> 20, "MB")`,
      );
      assertStopped(outcome, peakMb, /MemoryError|RangeError: Array buffer allocation failed/);
    });
  },
);
