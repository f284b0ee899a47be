/**
 * The code execution tool as the service describes it (server-tool-kind.ts);
 * tools/code-execution/ runs it. A run reads to the model as its return code, stdout and stderr.
 */
import { SERVER_TOOL_NAMES, SERVER_TOOL_VERSIONS } from '@model-messages/protocol';
import { errorCodeText, isErrorContent, jsonCharacters, textOf } from './result-values.js';
import type { ServerToolKind } from './server-tool-kind.js';

interface CodeOutput {
  type?: unknown;
  return_code?: unknown;
  stdout?: unknown;
  stderr?: unknown;
}

export const codeExecutionKind = {
  name: SERVER_TOOL_NAMES.codeExecution,
  types: SERVER_TOOL_VERSIONS.codeExecution,
  resultType: 'code_execution_tool_result',
  offer: {
    description: 'Run Python code in a sandbox and return its standard output, standard error and return code.',
    inputSchema: {
      type: 'object',
      properties: { code: { type: 'string', description: 'The Python code to run.' } },
      required: ['code'],
      additionalProperties: false,
    },
  },
  resultText: (content) => {
    const output = content as CodeOutput;
    if (isErrorContent(content)) return `Code execution failed: ${errorCodeText(content)}.`;
    const code = typeof output.return_code === 'number' ? output.return_code : 'unknown';
    return `Return code: ${code}\nstdout:\n${textOf(output.stdout)}\nstderr:\n${textOf(output.stderr)}`;
  },
  // What the tool cuts to its share: stdout and stderr.
  resultCharacters: (content) => {
    const output = content as CodeOutput;
    if (output.type !== 'code_execution_result') return jsonCharacters(content);
    return textOf(output.stdout).length + textOf(output.stderr).length;
  },
  // One share, as one more call would take: code's output is not a research source to divide.
  headroom: 'single',
  // The public API's usage.server_tool_use has no code execution counter.
  usageCounter: undefined,
} satisfies ServerToolKind;
