/**
 * Spec rule 5 and Versioning: the small tier of the newer generation thinks by default on a
 * request that offers a tool, so the client sends `thinking: {type: "disabled"}` on every request
 * to a model on its list unless the caller asked to think. Mid and large never get `disabled`
 * from here (the list is checked when the Client is built, and the pre-send checks refuse it).
 */
import type { MessageRequest } from '@mms/protocol';

export function withThinkingPolicy(request: MessageRequest, disabledModels: ReadonlySet<string>): MessageRequest {
  // A `thinking` the caller set is the caller's choice, `adaptive` and `disabled` alike.
  if (request.thinking !== undefined || !disabledModels.has(request.model)) return request;
  return { ...request, thinking: { type: 'disabled' } };
}
