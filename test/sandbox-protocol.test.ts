/**
 * The sandbox's message channel under attack: code writes to its fd 3 itself (through
 * `import js`) what the child's own callHost never would. Each such message kills the
 * execution at once with a protocol breach that says what it was, and the service stops reading
 * it; answers the code leaves unread cannot pile up in the service. Honest code that makes
 * many calls at once, or more than it may, is unaffected.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { codeExecutionConfig } from '../packages/server/src/config/config-schema.js';
import { MAX_UNREAD_BYTES } from '../packages/server/src/tools/code-execution/answer-writer.js';
import { ChildProcessRunner } from '../packages/server/src/tools/code-execution/child-process-runner.js';
import type { RunOptions, RunOutcome } from '../packages/server/src/tools/code-execution/code-runner.js';
import { MAX_CALLS_IN_FLIGHT } from '../packages/server/src/tools/code-execution/host-calls.js';

const WEB_FETCH = { name: 'web_fetch', firstParameter: 'url' };
const MAX_HOST_CALLS = 20;
/** An answer this size makes a few unread ones pass MAX_UNREAD_BYTES before MAX_CALLS_IN_FLIGHT of them. */
const ANSWER_BYTES = 256 * 1024;

let runner: ChildProcessRunner;

before(() => {
  runner = new ChildProcessRunner({
    ...codeExecutionConfig.parse({ poolSize: 2, warmAtStart: true, timeoutMs: 10_000, maxHostCalls: MAX_HOST_CALLS }),
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
    // Every answer the service held for it was one of these calls' answers.
    assert.ok(outcome.calls <= MAX_CALLS_IN_FLIGHT, `${outcome.calls} answers made`);
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
