/**
 * The `tool_reference` blocks of a conversation, each with where it stands: inside user turns'
 * tool results (what a client's tool search answers, as Claude Code's ToolSearch does) and inside
 * assistant turns' `tool_search_tool_result` blocks (the service's own tool search, issue 34).
 * Read by the rule that they name a tool of the request (endpoint-rules.ts) and by the tool table
 * that loads the deferred tools they name (server call-builder/tool-table.ts).
 */
import type { ContentBlockParam } from './content-block-schema.js';
import type { MessageParam } from './request-schema.js';

export interface ToolReference {
  toolName: string;
  /** `messages.N.content.M.content.K`, for an error naming the block. */
  where: string;
}

export function toolReferences(messages: readonly MessageParam[]): ToolReference[] {
  const found: ToolReference[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'system' || typeof message.content === 'string') return;
    message.content.forEach((block, position) => {
      for (const [place, name] of referencedNames(block))
        found.push({ toolName: name, where: `messages.${index}.content.${position}.${place}` });
    });
  });
  return found;
}

/**
 * The names a block's tool references load, each with its place inside the block: a client tool
 * result's `content.K`, a tool search result's `content.tool_references.K`.
 */
export function referencedNames(
  block: ContentBlockParam | { type: string; content?: unknown },
): Array<[string, string]> {
  if (block.type === 'tool_result' && Array.isArray(block.content))
    return (block.content as Array<{ type: string; tool_name?: string }>).flatMap((inner, place) =>
      inner.type === 'tool_reference' ? [[`content.${place}`, inner.tool_name!] as [string, string]] : [],
    );
  if (block.type !== 'tool_search_tool_result') return [];
  const content = block.content as { type?: unknown; tool_references?: unknown };
  if (content?.type !== 'tool_search_tool_search_result' || !Array.isArray(content.tool_references)) return [];
  return (content.tool_references as Array<{ tool_name?: unknown }>).flatMap((reference, place) =>
    typeof reference.tool_name === 'string'
      ? [[`content.tool_references.${place}`, reference.tool_name] as [string, string]]
      : [],
  );
}
