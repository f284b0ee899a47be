/**
 * Only URLs that already appeared in the conversation (or in this turn's tool results, such as
 * search results) may be fetched, so a prompt cannot make the service send data to a host of
 * its choosing. The model's own calls do not count: a call cannot vouch for itself.
 */
import type { MessageRequest } from '@mms/protocol';

export function mentionedInConversation(url: string, request: MessageRequest, turnSoFar: readonly unknown[]): boolean {
  const results = turnSoFar.filter((block) => (block as { type?: unknown }).type !== 'server_tool_use');
  const haystack = JSON.stringify([request.system ?? '', request.messages, results]);
  const bare = url.replace(/\/$/, '');
  return haystack.includes(bare) || haystack.includes(JSON.stringify(bare).slice(1, -1));
}
