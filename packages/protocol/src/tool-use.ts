/**
 * Whether a request uses tools, for rule 4 (a prefill cannot be combined with tool use): it
 * offers tools, or its conversation holds a tool's blocks, a call or a result, client or server,
 * in any message (issue 32: a conversation of tool calls and results with no `tools` field,
 * ending on an assistant prefill, was let through, as the check read `tools` alone).
 */
import { SERVER_TOOL_RESULT_TYPES } from './constants.js';
import type { ConversationRequest } from './request-schema.js';

const TOOL_BLOCK_TYPES: ReadonlySet<string> = new Set([
  'tool_use',
  'tool_result',
  'server_tool_use',
  ...SERVER_TOOL_RESULT_TYPES,
]);

export function usesTools(request: ConversationRequest): boolean {
  if ((request.tools?.length ?? 0) > 0) return true;
  return request.messages.some(
    (message) => Array.isArray(message.content) && message.content.some((block) => TOOL_BLOCK_TYPES.has(block.type)),
  );
}
