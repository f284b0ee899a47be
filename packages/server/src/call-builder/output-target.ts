/** What the model's output must be, from `tool_choice` and `output_config.format`. */
import type { ConversationRequest } from '@model-messages/protocol';
import type { FormatTarget, OfferedTool, OutputTarget } from '../backends/call/model-call.js';

export const FORMAT_WHERE = 'output_config.format.schema';

export function outputTarget(request: ConversationRequest, tools: readonly OfferedTool[]): OutputTarget {
  const choice = request.tool_choice;
  if (tools.length > 0 && (choice?.type === 'tool' || choice?.type === 'any')) {
    // The endpoint rules made sure a named tool is offered.
    const forced =
      choice.type === 'tool'
        ? tools.find((tool) => tool.name === choice.name)!
        : tools.length === 1
          ? tools[0]!
          : undefined;
    return forced ? { kind: 'tool', tool: forced } : { kind: 'any-tool' };
  }
  const schema = request.output_config?.format?.schema;
  const format: FormatTarget | undefined = schema ? { schema, where: FORMAT_WHERE } : undefined;
  return { kind: 'answer', format, toolsAllowed: tools.length > 0 && choice?.type !== 'none' };
}
