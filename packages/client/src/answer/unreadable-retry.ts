/**
 * The call's one retry of a 2xx whose body could not be read (issue 32). Spec, Client retry
 * policy 2: "a successful response with no usable answer is retried at most once"; the HTTP
 * layer never retries it (it is no transport failure), and one call retries it once at most,
 * however its requests are layered: a guardrail retry, research pass 1 and pass 2.
 */
import type { CallContext } from '../call-context.js';
import type { UnreadableBody } from '../transport/send-with-retries.js';

export const UNREADABLE_RETRY_SPENT = 'the call already spent its one retry of an unreadable 2xx';

export function unreadableRetryReason(body: Pick<UnreadableBody, 'detail'>): string {
  return `the 2xx body was unreadable; sending the request again: ${body.detail}`;
}

/**
 * Spends the call's retry and tells onRetry, for a call without an answer layer of its own
 * (`client.messages`, research pass 1); returns why not when it was spent already.
 */
export function spendUnreadableRetry(context: CallContext, model: string, body: UnreadableBody): string | undefined {
  if (context.account.unreadableRetrySpent) return UNREADABLE_RETRY_SPENT;
  context.account.unreadableRetrySpent = true;
  context.options.hooks.onRetry?.({
    layer: 'answer',
    model,
    reason: unreadableRetryReason(body),
    delayMs: 0,
    nextAttempt: context.account.attempts + 1,
  });
  return undefined;
}
