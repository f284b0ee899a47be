/**
 * The child-process runner driven directly, one runner for the whole file: before its first
 * execution a runner takes the Python snapshot from the tests' snapshot folder (making it the
 * first time) and loads a probe sandbox to measure the address-space limit, seconds of CPU that
 * every test here shares. It keeps no pool, so an
 * execution's sandbox is the only one running (the memory tests rely on that), and none is
 * loaded only to be thrown away.
 *
 * The sandbox's message channel under attack: code writes to its fd 3 itself (through
 * `import js`) what the child's own callHost never would. Each such message kills the
 * execution at once with a protocol breach that says what it was, and the service stops reading
 * it; answers the code leaves unread cannot pile up in the service. Honest code that makes
 * many calls at once, or more than it may, is unaffected.
 *
 * A sandbox's memory is bounded by the kernel, not only by a watchdog that polls: each program
 * of the memory tests allocates far past memoryMb in one step while the service's event loop
 * is held busy by a synchronous loop (as a flood of messages or a big request once held it),
 * and is still stopped near the limit. The busy loop starts as the program's first host call is
 * answered and lasts until the sandbox is gone, so nothing on the service's loop can act
 * meanwhile; it reads the sandbox's peak resident memory from /proc as it waits. These run
 * where the kernel can limit a sandbox: prlimit (the address space) here, as no cgroup folder
 * is configured. Where prlimit is missing they skip.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { TEST_SNAPSHOT_FOLDER } from '@model-messages/testing';
import { codeExecutionConfig } from '../packages/server/src/config/config-schema.js';
import { MAX_UNREAD_BYTES } from '../packages/server/src/tools/code-execution/answer-writer.js';
import { ChildProcessRunner } from '../packages/server/src/tools/code-execution/child-process-runner.js';
import type { RunOptions, RunOutcome } from '../packages/server/src/tools/code-execution/code-runner.js';
import { MAX_CALLS_IN_FLIGHT } from '../packages/server/src/tools/code-execution/host-calls.js';
import { sandboxPlatform } from '../packages/server/src/tools/code-execution/sandbox-platform.js';

const NO_KERNEL_LIMIT =
  (await sandboxPlatform()).prlimit === undefined
    ? 'neither prlimit nor a cgroup folder is available here, so no kernel limit bounds sandbox memory'
    : false;
const WEB_FETCH = { name: 'web_fetch', firstParameter: 'url' };
const MAX_HOST_CALLS = 20;
/** An answer this size makes a few unread ones pass MAX_UNREAD_BYTES before MAX_CALLS_IN_FLIGHT of them. */
const ANSWER_BYTES = 256 * 1024;
const LIMIT_MB = 400;
/** Far past the limit: what the program asks for in one step. */
const ASKED_MB = 1536;
/** The busy loop never outlasts this, even if the sandbox were never stopped. */
const LONGEST_BLOCK_MS = 60_000;

let runner: ChildProcessRunner;

before(() => {
  // Without a pool the execution's sandbox is the only one: the busy loop waits for it alone.
  // warmAtStart makes the snapshot and the probe while the file starts.
  runner = new ChildProcessRunner({
    ...codeExecutionConfig.parse({
      poolSize: 0,
      warmAtStart: true,
      memoryMb: LIMIT_MB,
      timeoutMs: 60_000,
      maxHostCalls: MAX_HOST_CALLS,
      snapshotFolder: TEST_SNAPSHOT_FOLDER,
    }),
  });
});

after(() => runner.close());

/** Runs `code` with web_fetch offered; `answer` is what each call of it returns. */
async function run(
  code: string,
  answer: () => unknown = () => ({ ok: true }),
): Promise<RunOutcome & { calls: number }> {
  let calls = 0;
  const options: RunOptions = {
    hostFunctions: [WEB_FETCH],
    callHost: async () => {
      calls += 1;
      return answer();
    },
    signal: new AbortController().signal,
  };
  return { ...(await runner.run(code, options)), calls };
}

/** Python that writes `lines` to the message channel itself, then would go on for seconds. */
function forging(lines: string): string {
  return `import js, time
js.process.getBuiltinModule("fs").writeSync(3, ${JSON.stringify(lines)})
time.sleep(3)
print("survived")`;
}

function assertBreach(outcome: RunOutcome, note: RegExp): void {
  assert.equal(outcome.kind, 'killed', JSON.stringify(outcome));
  if (outcome.kind !== 'killed') return;
  assert.equal(outcome.reason, 'protocol_breach');
  assert.match(outcome.stderr, note);
  assert.doesNotMatch(outcome.stdout, /survived/);
}

describe('breaches of the message protocol kill the execution at once', () => {
  test('a forged call of a function not offered kills it with a breach naming the function', async () => {
    const outcome = await run(forging('{"type":"call","id":1,"name":"nope","input":{}}\n'));
    assertBreach(
      outcome,
      /the sandbox broke its message protocol \(a call of "nope", a function not offered to this code\) and was killed/,
    );
    assert.equal(outcome.calls, 0);
  });

  test('a flood of forged calls is not answered: one breach, no call made', async () => {
    const line = '{"type":"call","id":1,"name":"nope","input":{}}\n';
    const outcome = await run(forging(line.repeat(5_000)));
    assertBreach(outcome, /a call of "nope", a function not offered to this code/);
    assert.equal(outcome.calls, 0);
  });

  test('a line that is not JSON, or longer than the cap, is a breach', async () => {
    assertBreach(await run(forging('not json\n')), /\(a message that is not JSON\)/);
    assertBreach(await run(forging('x'.repeat(70_000))), /\(a message longer than 65536 bytes\)/);
  });

  test('calls written without reading their answers are killed past the unread cap; the service made few answers', async () => {
    // The program sends a call every 20 ms from JavaScript, whose loop it never lets read stdin.
    const outcome = await run(
      `import js
js.eval("""
const fs = process.getBuiltinModule('fs');
const pause = new Int32Array(new SharedArrayBuffer(4));
for (let id = 1; id <= 400; id++) {
  fs.writeSync(3, JSON.stringify({ type: 'call', id, name: 'web_fetch', input: { url: 'x' } }) + '\\\\n');
  Atomics.wait(pause, 0, 0, 20);
}
""")
print("survived")`,
      () => ({ page: 'x'.repeat(ANSWER_BYTES) }),
    );
    assertBreach(
      outcome,
      new RegExp(
        `\\((more than ${MAX_UNREAD_BYTES} bytes of answers left unread|more than ${MAX_CALLS_IN_FLIGHT} calls waiting for answers at once)\\)`,
      ),
    );
    // The service made no more answers than the cap lets wait unread (the kernel's pipe, 64 KiB,
    // takes one more part of one) and the calls waiting for theirs when it was hit: far fewer
    // than the 400 sent. Under load the calls arrive several in one read, all of them made
    // before any answer is written, so the count varies (10 was seen inside `npm test`).
    const answersUnread = Math.ceil(MAX_UNREAD_BYTES / ANSWER_BYTES) + 1;
    assert.ok(outcome.calls <= answersUnread + MAX_CALLS_IN_FLIGHT, `${outcome.calls} answers made`);
  });
});

describe('honest code is unaffected', () => {
  test('more calls at once than may wait for answers all get theirs: the child holds the rest back', async () => {
    const outcome = await run(`import asyncio
pages = await asyncio.gather(*[web_fetch(f"https://example.com/{n}") for n in range(${MAX_CALLS_IN_FLIGHT * 2})])
print(len(pages), all(page["ok"] for page in pages))`);
    assert.equal(outcome.kind, 'exited', JSON.stringify(outcome));
    assert.equal(outcome.kind === 'exited' && outcome.stdout, `${MAX_CALLS_IN_FLIGHT * 2} True\n`);
    assert.equal(outcome.calls, MAX_CALLS_IN_FLIGHT * 2);
  });

  test('a call past maxHostCalls is a RuntimeError in Python, not a kill', async () => {
    const outcome = await run(`for n in range(${MAX_HOST_CALLS}):
    await web_fetch(f"https://example.com/{n}")
try:
    await web_fetch("https://example.com/one-too-many")
except RuntimeError as error:
    print(error)`);
    assert.equal(outcome.kind, 'exited', JSON.stringify(outcome));
    assert.equal(
      outcome.kind === 'exited' && outcome.stdout,
      `more than ${MAX_HOST_CALLS} tool calls in one execution\n`,
    );
    assert.equal(outcome.calls, MAX_HOST_CALLS);
  });
});

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
