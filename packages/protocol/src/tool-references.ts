/**
 * The `tool_reference` blocks of a conversation (inside user turns' tool results), each with
 * where it stands: read by the rule that they name a tool of the request (endpoint-rules.ts) and
 * by the tool table that loads the deferred tools they name (server call-builder/tool-table.ts).
 */
import type { MessageParam } from './request-schema.js';

export interface ToolReference {
  toolName: string;
  /** `messages.N.content.M.content.K`, for an error naming the block. */
  where: string;
}

export function toolReferences(messages: readonly MessageParam[]): ToolReference[] {
  const found: ToolReference[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'user' || typeof message.content === 'string') return;
    message.content.forEach((block, position) => {
      if (block.type !== 'tool_result' || typeof block.content === 'string') return;
      (block.content ?? []).forEach((inner, place) => {
        if (inner.type === 'tool_reference')
          found.push({ toolName: inner.tool_name, where: `messages.${index}.content.${position}.content.${place}` });
      });
    });
  });
  return found;
}
