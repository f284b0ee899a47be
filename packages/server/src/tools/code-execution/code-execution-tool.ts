/**
 * The code execution server tool (`code_execution_20260521`): runs the model's Python in a
 * sandbox and answers with its stdout, stderr and return code. Code may await the request's
 * web_search and web_fetch (host-functions.ts); those calls go through the agent loop's
 * max_uses and usage counting, and their results reach only the code, so that it can filter
 * them before anything enters the context: the turn sees what the code prints, nothing more,
 * cut to the call's share of the turn's input headroom (agent/context-budget.ts).
 */
import type { ServerToolResultBlock, ServerToolUseBlock } from '@model-messages/protocol';
import { serverToolError, serverToolRefusal, type ToolCallContext } from '../../agent/server-tool-runner.js';
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
    if (typeof code !== 'string') return serverToolRefusal(call, 'invalid_tool_input');
    const outcome = await this.runner.run(code, {
      hostFunctions: hostFunctionsFor(context.request),
      callHost: async (name, input, signal) =>
        resultForCode((await context.callServerTool(name, input, signal)).content),
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
        // Over memory or disk, or misbehaving: a process killed by SIGKILL, as a shell would report it.
        return executionResult(call, fitOutput(outcome, context.resultCharacters), 137);
      case 'exited':
        return executionResult(call, fitOutput(outcome, context.resultCharacters), outcome.returnCode);
    }
  }

  /** An execution's stdout and stderr cut to `characters` as `fitOutput` cuts them (ServerToolRunner.fit). */
  fit(result: ServerToolResultBlock, characters: number): ServerToolResultBlock {
    const content = result.content as Output & { type: string };
    if (content.type !== 'code_execution_result') return result;
    return { ...result, content: { ...content, ...fitOutput(content, characters) } };
  }

  close(): Promise<void> {
    return this.runner.close();
  }
}

interface Output {
  stdout: string;
  stderr: string;
}

/**
 * stdout and stderr within the result's share of the context window, with a note in stderr when
 * they were cut. stderr keeps at least half of the room (a traceback says what went wrong) and
 * whatever stdout leaves.
 */
export function fitOutput(output: Output, characters: number): Output {
  const { stdout, stderr } = output;
  if (stdout.length + stderr.length <= characters) return { stdout, stderr };
  const dropped = stdout.length + stderr.length;
  const note = `[output cut to ${characters} characters, its share of the context window; it had ${dropped}]\n`;
  // Too little room for the note: the output alone, cut.
  if (characters <= note.length) return { stdout: stdout.slice(0, characters), stderr: '' };
  const room = characters - note.length;
  const stderrKept = stderrBeforeNote(stderr, Math.max(room - stdout.length, Math.floor(room / 2)));
  const stdoutKept = stdout.slice(0, room - stderrKept.length);
  return { stdout: stdoutKept, stderr: stderrKept + note };
}

/**
 * stderr within `room`, ending in a line break so that the note goes on a line of its own. A
 * whole stderr keeps every character and takes the break from stdout's room (output was cut, so
 * a whole stderr is under half the room and the break fits); a cut one gives the break its last
 * kept character.
 */
function stderrBeforeNote(stderr: string, room: number): string {
  if (stderr.length <= room) return stderr === '' || stderr.endsWith('\n') ? stderr : `${stderr}\n`;
  const cut = stderr.slice(0, room);
  return cut === '' || cut.endsWith('\n') ? cut : `${cut.slice(0, -1)}\n`;
}

function executionResult(
  call: ServerToolUseBlock,
  { stdout, stderr }: Output,
  returnCode: number,
): ServerToolResultBlock {
  return {
    type: 'code_execution_tool_result',
    tool_use_id: call.id,
    content: { type: 'code_execution_result', stdout, stderr, return_code: returnCode, content: [] },
  };
}
