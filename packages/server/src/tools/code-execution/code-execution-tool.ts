/**
 * The code execution server tool (`code_execution_20260521`): runs the model's Python in a
 * sandbox and answers with its stdout, stderr and return code. Code may await the request's
 * web_search and web_fetch (host-functions.ts); those calls go through the agent loop's
 * max_uses and usage counting, and their results reach only the code, so that it can filter
 * them before anything enters the context: the turn sees what the code prints, nothing more.
 */
import type { ServerToolResultBlock, ServerToolUseBlock } from '@mms/protocol';
import { serverToolError, type ToolCallContext } from '../../agent/server-tool-runner.js';
import { ChildProcessRunner, type ChildProcessRunnerOptions } from './child-process-runner.js';
import type { CodeRunner } from './code-runner.js';
import { hostFunctionsFor, resultForCode } from './host-functions.js';

export type CodeExecutionOptions = Omit<ChildProcessRunnerOptions, 'pyodideFolder'>;

export class CodeExecutionTool {
  private readonly runner: CodeRunner;

  /** The child-process runner from `options`, unless another runner (a container one) is given. */
  constructor(options: CodeExecutionOptions, runner?: CodeRunner) {
    this.runner = runner ?? new ChildProcessRunner(options);
  }

  async run(call: ServerToolUseBlock, context: ToolCallContext): Promise<ServerToolResultBlock> {
    const code = call.input.code;
    if (typeof code !== 'string') return serverToolError(call, 'invalid_tool_input');
    const outcome = await this.runner.run(code, {
      hostFunctions: hostFunctionsFor(context.request),
      callHost: async (name, input) => resultForCode((await context.callServerTool(name, input)).content),
      signal: context.signal,
    });
    switch (outcome.kind) {
      case 'busy':
        return serverToolError(call, 'too_many_requests');
      case 'unavailable':
        return serverToolError(call, 'unavailable');
      case 'killed':
        if (outcome.reason === 'time_limit') return serverToolError(call, 'execution_time_exceeded');
        if (outcome.reason === 'aborted') return serverToolError(call, 'unavailable');
        // Over memory or misbehaving: a process killed by SIGKILL, as a shell would report it.
        return executionResult(call, outcome.stdout, outcome.stderr, 137);
      case 'exited':
        return executionResult(call, outcome.stdout, outcome.stderr, outcome.returnCode);
    }
  }

  close(): Promise<void> {
    return this.runner.close();
  }
}

function executionResult(call: ServerToolUseBlock, stdout: string, stderr: string, returnCode: number): ServerToolResultBlock {
  return {
    type: 'code_execution_tool_result',
    tool_use_id: call.id,
    content: { type: 'code_execution_result', stdout, stderr, return_code: returnCode, content: [] },
  };
}
