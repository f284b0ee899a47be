/** What the scripted "model" reads of a conversation. */
import type { ConversationRequest, MessageParam } from '@mms/protocol';

function textOf(message: MessageParam): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

/** Index of the last user message that carries text (tool_result-only turns do not count). */
function lastUserTextIndex(request: ConversationRequest): number {
  return request.messages.findLastIndex((message) => message.role === 'user' && textOf(message) !== '');
}

/** The text of the last user turn that has text; the script's `when` is matched against it. */
export function lastUserText(request: ConversationRequest): string {
  const message = request.messages[lastUserTextIndex(request)];
  return message ? textOf(message) : '';
}

/**
 * Steps this turn already took before the current request: one per assistant message after
 * the last user text, so that a client tool round trip moves the script on to its next step.
 */
export function priorSteps(request: ConversationRequest): number {
  const start = lastUserTextIndex(request);
  return request.messages.slice(start + 1).filter((message) => message.role === 'assistant').length;
}

/** Text of tool results in the last user turn, for the default answer after a tool round trip. */
export function lastToolResultText(request: ConversationRequest): string {
  const last = request.messages.at(-1);
  if (!last || last.role !== 'user' || typeof last.content === 'string') return '';
  return last.content
    .flatMap((block) => {
      if (block.type !== 'tool_result') return [];
      if (typeof block.content === 'string') return [block.content];
      return (block.content ?? []).flatMap((inner) => (inner.type === 'text' ? [inner.text] : []));
    })
    .join('\n');
}
