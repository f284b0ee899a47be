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
import { buildOrRefuse } from './unbuildable-schema.js';

export function planDefaultAnswer(step: BackendStepRequest): PlannedBlock[] {
  const { request } = step;
  const echo = lastToolResultText(request) || lastUserText(request) || '(no text)';
  const forced = forcedTool(request.tools ?? [], request.tool_choice);
  const blocks: PlannedBlock[] = [];
  if (step.thinks) {
    const plan = forced ? `call the tool ${forced.name}` : 'repeat it back';
    blocks.push({ type: 'thinking', thinking: `The user wrote ${echo.length} characters. I will ${plan}.` });
  }
  const format = request.output_config?.format;
  if (forced) blocks.push(toolCall(forced, echo, request.tools ?? []));
  else if (format)
    blocks.push({
      type: 'text',
      text: JSON.stringify(buildOrRefuse(() => exampleInstance(format.schema), 'output_config.format.schema')),
    });
  else blocks.push({ type: 'text', text: echo });
  return blocks;
}

type ToolChoice = BackendStepRequest['request']['tool_choice'];

function forcedTool(tools: readonly ToolParam[], choice: ToolChoice): ToolParam | undefined {
  if (choice?.type === 'tool') return tools.find((tool) => tool.name === choice.name);
  if (choice?.type === 'any') return tools.find(isCustomTool) ?? tools[0];
  return undefined;
}

function toolCall(tool: ToolParam, text: string, tools: readonly ToolParam[]): PlannedBlock {
  if (isCustomTool(tool)) {
    const input = buildOrRefuse(() => exampleInstance(tool.input_schema), `tools.${tools.indexOf(tool)}.input_schema`);
    return { type: 'tool_use', name: tool.name, input: input as Record<string, unknown> };
  }
  const input =
    tool.name === SERVER_TOOL_NAMES.codeExecution ? { code: `print(${JSON.stringify(text)})` } : { query: text };
  return { type: 'server_tool_use', name: tool.name, input };
}
