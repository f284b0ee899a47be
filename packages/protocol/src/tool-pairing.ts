/**
 * Conversation shape rules for client tools: every `tool_use` in an assistant turn is answered
 * by exactly one `tool_result` in the user turn right after it, and every `tool_result` answers
 * a `tool_use` of the assistant turn right before it. Messages name the offending id. A `system`
 * message between them does not count: it is an instruction beside the conversation, which the
 * model call places after the results (server call-builder/conversation.ts).
 */
import { ServiceError } from './errors.js';
import type { ContentBlockParam } from './content-block-schema.js';
import type { MessageParam } from './request-schema.js';

function blocksOf(message: MessageParam | undefined): ContentBlockParam[] {
  if (!message || message.role === 'system' || typeof message.content === 'string') return [];
  return message.content;
}

function toolUseIds(message: MessageParam | undefined): string[] {
  return blocksOf(message).flatMap((block) => (block.type === 'tool_use' ? [block.id] : []));
}

function toolResultIds(message: MessageParam | undefined): string[] {
  return blocksOf(message).flatMap((block) => (block.type === 'tool_result' ? [block.tool_use_id] : []));
}

export function checkToolPairing(messages: readonly MessageParam[]): void {
  const seenToolUseIds = new Set<string>();
  let previous: number | undefined;
  messages.forEach((message, index) => {
    if (message.role === 'system') return;
    if (message.role === 'assistant') checkAssistantTurn(messages, index, nextTurn(messages, index), seenToolUseIds);
    else checkUserTurn(messages, index, previous);
    previous = index;
  });
}

/** The index of the next user or assistant message after `index`, if any. */
function nextTurn(messages: readonly MessageParam[], index: number): number | undefined {
  for (let next = index + 1; next < messages.length; next += 1) if (messages[next]!.role !== 'system') return next;
  return undefined;
}

/**
 * A server tool call is answered in the same assistant turn, by the service that ran it: each
 * result block after its call, and once. The public API refuses a result without its call before
 * it; accepted here, the model read an answer to a call it never made (issue 31).
 */
function checkServerToolResults(message: MessageParam | undefined, index: number): void {
  const blocks = blocksOf(message);
  const unanswered = new Set<string>();
  blocks.forEach((block, position) => {
    if (block.type === 'server_tool_use') unanswered.add(block.id);
    else if (block.type.endsWith('_tool_result') && 'tool_use_id' in block && !unanswered.delete(block.tool_use_id))
      throw new ServiceError(
        'invalid_request',
        `messages.${index}.content.${position}: unexpected tool_use_id found in ${block.type} blocks: ${block.tool_use_id}. Each ${block.type} block must answer a server_tool_use block before it in the same message, once.`,
      );
  });
  if (unanswered.size > 0) {
    throw new ServiceError(
      'invalid_request',
      `messages.${index}: server_tool_use ids were found without their result blocks in the same message: ${[...unanswered].join(', ')}`,
    );
  }
}

function checkAssistantTurn(
  messages: readonly MessageParam[],
  index: number,
  next: number | undefined,
  seen: Set<string>,
): void {
  checkServerToolResults(messages[index], index);
  const uses = toolUseIds(messages[index]);
  for (const id of uses) {
    if (seen.has(id))
      throw new ServiceError(
        'invalid_request',
        `messages.${index}: tool_use id "${id}" is used more than once in the conversation`,
      );
    seen.add(id);
  }
  if (uses.length === 0 || next === undefined) return;
  const answered = new Set(toolResultIds(messages[next]));
  const missing = uses.filter((id) => !answered.has(id));
  if (missing.length > 0) {
    throw new ServiceError(
      'invalid_request',
      `messages.${next}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(', ')}. Each tool_use block must have a corresponding tool_result block in the next message.`,
    );
  }
}

function checkUserTurn(messages: readonly MessageParam[], index: number, previousIndex: number | undefined): void {
  const results = toolResultIds(messages[index]);
  if (results.length === 0) return;
  const previous = previousIndex === undefined ? undefined : messages[previousIndex];
  const offered = new Set(previous?.role === 'assistant' ? toolUseIds(previous) : []);
  const answered = new Set<string>();
  for (const id of results) {
    if (!offered.has(id))
      throw new ServiceError(
        'invalid_request',
        `messages.${index}: unexpected tool_use_id found in tool_result blocks: ${id}. Each tool_result block must have a corresponding tool_use block in the previous message.`,
      );
    if (answered.has(id))
      throw new ServiceError('invalid_request', `messages.${index}: tool_use id "${id}" has more than one tool_result`);
    answered.add(id);
  }
}
