/**
 * The code execution tool's edges, without the service: a sandbox that cannot start answers the
 * unavailable error block, and the execution slots bound how many run at once. The tool through
 * the service, its sandbox battery included: test/code-execution.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageRequest } from '@model-messages/protocol';
import { codeExecutionConfig } from '../src/config/config-schema.js';
import { ChildProcessRunner } from '../src/tools/code-execution/child-process-runner.js';
import { CodeExecutionTool } from '../src/tools/code-execution/code-execution-tool.js';
import { ExecutionSlots } from '../src/tools/code-execution/execution-slots.js';

describe('runner edges', () => {
  const request = { model: 'mid', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] } as MessageRequest;
  const context = {
    request,
    turnSoFar: [],
    resultCharacters: 16_000,
    signal: new AbortController().signal,
    callServerTool: () => Promise.reject(new Error('not used')),
  };

  test('a sandbox that cannot start is the unavailable error block', async () => {
    const options = { ...codeExecutionConfig.parse({ poolSize: 0 }), pyodideFolder: join(tmpdir(), 'no-pyodide-here') };
    const tool = new CodeExecutionTool(options, new ChildProcessRunner(options));
    try {
      const result = await tool.run(
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'code_execution', input: { code: 'print(1)' } },
        context,
      );
      assert.deepEqual(result, {
        type: 'code_execution_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: { type: 'code_execution_tool_result_error', error_code: 'unavailable' },
      });
    } finally {
      await tool.close();
    }
  });

  test('execution slots: past the bound a caller waits, and past the wait it is refused as busy', async () => {
    const slots = new ExecutionSlots(1, 50);
    const signal = new AbortController().signal;
    const first = await slots.acquire(signal);
    assert.equal(first.granted, true);
    assert.deepEqual(await slots.acquire(signal), { granted: false, why: 'busy' });
    const waiting = slots.acquire(signal);
    if (first.granted) first.release();
    assert.equal((await waiting).granted, true);
    const aborted = new AbortController();
    const queued = slots.acquire(aborted.signal);
    aborted.abort();
    assert.deepEqual(await queued, { granted: false, why: 'aborted' });
  });
});
