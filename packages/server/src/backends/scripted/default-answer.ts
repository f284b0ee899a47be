/**
 * The scripted backend's answer when no script entry matches: echo the last user text, think
 * first when the request thinks, call a forced tool with a valid instance of its schema, and
 * answer `output_config.format` with JSON valid against its schema.
 */
import { SERVER_TOOL_NAMES } from '@model-messages/protocol';
import type { ModelCall, OfferedTool } from '../call/model-call.js';
import { lastToolResultText, lastUserText } from './conversation-text.js';
import { exampleInstance } from './schema-instance.js';
import type { PlannedBlock } from './script-file.js';
import { buildOrRefuse } from './unbuildable-schema.js';

export function planDefaultAnswer(call: ModelCall): PlannedBlock[] {
  const echo = lastToolResultText(call.turns) || lastUserText(call.turns) || '(no text)';
  const forced = forcedTool(call);
  const blocks: PlannedBlock[] = [];
  if (call.thinking.on) {
    const plan = forced ? `call the tool ${forced.name}` : 'repeat it back';
    blocks.push({ type: 'thinking', thinking: `The user wrote ${echo.length} characters. I will ${plan}.` });
  }
  const format = call.output.kind === 'answer' ? call.output.format : undefined;
  if (forced) blocks.push(toolCall(forced, echo));
  else if (format)
    blocks.push({
      type: 'text',
      text: JSON.stringify(buildOrRefuse(() => exampleInstance(format.schema), format.where)),
    });
  else blocks.push({ type: 'text', text: echo });
  return blocks;
}

/** tool_choice `any` with several tools: the first custom tool, as a model asked for output would pick. */
function forcedTool(call: ModelCall): OfferedTool | undefined {
  if (call.output.kind === 'tool') return call.output.tool;
  if (call.output.kind === 'any-tool') return call.tools.find((tool) => !tool.server) ?? call.tools[0];
  return undefined;
}

function toolCall(tool: OfferedTool, text: string): PlannedBlock {
  if (!tool.server) {
    const input = buildOrRefuse(() => exampleInstance(tool.inputSchema), tool.where);
    return { type: 'tool_use', name: tool.name, input: input as Record<string, unknown> };
  }
  const input =
    tool.name === SERVER_TOOL_NAMES.codeExecution ? { code: `print(${JSON.stringify(text)})` } : { query: text };
  return { type: 'server_tool_use', name: tool.name, input };
}
