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
 * Steps this turn already took before the current request, so that a client tool round trip,
 * or a paused turn sent back, moves the script on. An assistant message holds one step per run
 * of server tool results (each such step ended by running server tools), plus the step that
 * ended it unless it ends on a result (a paused turn: the next step is the one to run).
 */
export function priorSteps(request: ConversationRequest): number {
  const start = lastUserTextIndex(request);
  return request.messages
    .slice(start + 1)
    .filter((message) => message.role === 'assistant')
    .reduce((steps, message) => steps + stepsIn(message), 0);
}

function stepsIn(message: MessageParam): number {
  if (typeof message.content === 'string') return 1;
  let resultRuns = 0;
  let inRun = false;
  for (const block of message.content) {
    const isResult = block.type.endsWith('_tool_result') && block.type !== 'tool_result';
    if (isResult && !inRun) resultRuns += 1;
    inRun = isResult;
  }
  return resultRuns + (inRun ? 0 : 1);
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
