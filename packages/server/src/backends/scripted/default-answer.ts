/**
 * The scripted backend's answer when no script entry matches: echo the last user text, think
 * first when the request thinks, call a forced tool with a valid instance of its schema, and
 * answer `output_config.format` with JSON valid against its schema.
 */
import { isCustomTool, SERVER_TOOL_NAMES, type ToolParam } from '@mms/protocol';
import type { BackendStepRequest } from '../backend.js';
import { lastToolResultText, lastUserText } from './conversation-text.js';
import { exampleInstance } from './schema-instance.js';
import type { PlannedBlock } from './script-file.js';

export function planDefaultAnswer(step: BackendStepRequest): PlannedBlock[] {
  const { request } = step;
  const echo = lastToolResultText(request) || lastUserText(request) || '(no text)';
  const forced = forcedTool(request.tools ?? [], request.tool_choice);
  const blocks: PlannedBlock[] = [];
  if (step.thinks) {
    const plan = forced ? `call the tool ${forced.name}` : 'repeat it back';
    blocks.push({ type: 'thinking', thinking: `The user wrote ${echo.length} characters. I will ${plan}.` });
  }
  if (forced) blocks.push(toolCall(forced, echo));
  else if (request.output_config?.format) blocks.push({ type: 'text', text: JSON.stringify(exampleInstance(request.output_config.format.schema)) });
  else blocks.push({ type: 'text', text: echo });
  return blocks;
}

type ToolChoice = BackendStepRequest['request']['tool_choice'];

function forcedTool(tools: readonly ToolParam[], choice: ToolChoice): ToolParam | undefined {
  if (choice?.type === 'tool') return tools.find((tool) => tool.name === choice.name);
  if (choice?.type === 'any') return tools.find(isCustomTool) ?? tools[0];
  return undefined;
}

function toolCall(tool: ToolParam, text: string): PlannedBlock {
  if (isCustomTool(tool)) {
    return { type: 'tool_use', name: tool.name, input: exampleInstance(tool.input_schema) as Record<string, unknown> };
  }
  const input = tool.name === SERVER_TOOL_NAMES.codeExecution ? { code: `print(${JSON.stringify(text)})` } : { query: text };
  return { type: 'server_tool_use', name: tool.name, input };
}
