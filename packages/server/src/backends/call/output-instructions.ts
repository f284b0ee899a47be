/**
 * The words that tell the model what its output must be (call-builder/output-target.ts). An engine that
 * enforces the target by its own means (a named tool_choice, a Messages upstream) needs no words;
 * one that guides the output by grammar or schema, or only checks it afterwards, puts
 * `targetInstruction` into the system prompt, so that the model knows the meaning of what the
 * grammar holds it to.
 */
import type { OfferedTool, OutputTarget } from './model-call.js';

export function targetInstruction(output: OutputTarget, tools: readonly OfferedTool[]): string | undefined {
  switch (output.kind) {
    case 'tool':
      return forcedToolInstruction(output.tool);
    case 'any-tool': {
      const list = tools.map(
        (tool) => `- "${tool.name}": ${tool.description} Input schema: ${JSON.stringify(tool.inputSchema)}`,
      );
      return `Call one of these tools now, answering with JSON only: {"name": <tool name>, "input": <its input>}.\n${list.join('\n')}`;
    }
    case 'answer':
      if (!output.format) return undefined;
      return `${output.toolsAllowed ? 'Unless you call a tool, answer' : 'Answer'} with one JSON value only, matching this JSON Schema: ${JSON.stringify(output.format.schema)}`;
    default:
      return output satisfies never;
  }
}

export function forcedToolInstruction(tool: OfferedTool): string {
  return `Call the tool "${tool.name}" now: ${tool.description}\nAnswer with the tool's JSON input only. Its JSON Schema: ${JSON.stringify(tool.inputSchema)}`;
}

/**
 * The JSON an engine without a "call one of these" mode generates for `any-tool`: the tool's name
 * and its input, one schema per tool, so a grammar or guided decoding can hold it to them.
 */
export function toolEnvelopeSchema(tools: readonly OfferedTool[]): Record<string, unknown> {
  return {
    anyOf: tools.map((tool) => ({
      type: 'object',
      properties: { name: { const: tool.name }, input: tool.inputSchema },
      required: ['name', 'input'],
      additionalProperties: false,
    })),
  };
}
