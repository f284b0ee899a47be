/**
 * The HTTP layer: attempt, ask the ladder, wait, attempt again, all inside the deadline.
 * Returns the folded message, or the failure (http or timeout) with what every attempt said.
 */
import { API_VERSION, VERSION_HEADER, type MessageRequest } from '@model-messages/protocol';
import type { CallAccount, FailureDetail } from '../call-account.js';
import type { ResolvedOptions } from '../client-options.js';
import { attemptTimers, type Deadline } from '../deadline.js';
import type { FoldedMessage } from './message-folder.js';
import { decideRetry } from './retry-ladder.js';
import { sleepLong } from './long-timer.js';
import { clampToDeadline, MIN_ATTEMPT_MS, retryDelay } from './retry-delay.js';
import { streamAttempt, type AttemptOutcome } from './stream-attempt.js';

export interface SendContext {
  options: ResolvedOptions;
  deadline: Deadline;
  signal: AbortSignal | undefined;
  account: CallAccount;
}

/**
 * A 2xx whose body is no message (stream-attempt.ts): never retried here; the layer above
 * retries it at most once in the whole call and counts it as a decline (issue 32).
 */
export interface UnreadableBody {
  detail: string;
  requestId: string | undefined;
}

export type SendResult =
  | { ok: true; folded: FoldedMessage; requestId: string | undefined }
  | { ok: false; failure: FailureDetail; unreadable?: UnreadableBody };

export async function sendWithRetries(request: MessageRequest, context: SendContext): Promise<SendResult> {
  const { options, deadline, account } = context;
  const body = JSON.stringify({ ...request, stream: true });
  const headers = {
    ...options.headers,
    'x-api-key': options.apiKey,
    [VERSION_HEADER]: API_VERSION,
    'content-type': 'application/json',
    accept: 'text/event-stream',
  };
  const history: string[] = [];
  for (let retries = 0; ; retries += 1) {
    const left = deadline.leftMs();
    if (left < MIN_ATTEMPT_MS)
      return {
        ok: false,
        failure: timeout('deadline', `the deadline left ${Math.round(left)} ms, too little for an attempt`, history),
      };
    const started = Date.now();
    const outcome = await streamAttempt({
      url: `${options.baseURL}/v1/messages`,
      headers,
      body,
      fetch: options.fetch,
      timers: attemptTimers(left, options.timeouts),
      signal: context.signal,
    });
    account.attempt(
      request.model,
      outcome.requestId,
      'usage' in outcome ? outcome.usage : outcome.kind === 'message' ? outcome.folded.message.usage : undefined,
    );
    options.hooks.onAttempt?.({
      model: request.model,
      attempt: account.attempts,
      outcome: outcome.kind === 'aborted' ? 'connection' : outcome.kind,
      status: 'status' in outcome ? outcome.status : undefined,
      requestId: outcome.requestId,
      durationMs: Date.now() - started,
      detail: describeOutcome(outcome),
    });
    if (outcome.kind === 'message') return { ok: true, folded: outcome.folded, requestId: outcome.requestId };
    if (outcome.kind === 'aborted') throw outcome.reason;
    history.push(`attempt ${account.attempts}: ${describeOutcome(outcome)}`);
    const verdict = decideRetry(outcome, { retriesLeft: options.maxRetries - retries });
    if (!verdict.retry) {
      const failure = finalFailure(outcome, verdict.reason, history);
      if (outcome.kind !== 'unreadable') return { ok: false, failure };
      return { ok: false, failure, unreadable: { detail: outcome.detail, requestId: outcome.requestId } };
    }
    const delay = retryDelay(outcome, retries, options.backoff, options.random);
    const wait = clampToDeadline(delay.delayMs, deadline.leftMs());
    if (wait === undefined) {
      return {
        ok: false,
        failure: timeout(
          'retry-wait',
          `${verdict.reason}, but the wait (${Math.round(delay.delayMs)} ms from ${delay.source}) does not fit in the ${Math.round(deadline.leftMs())} ms left`,
          history,
        ),
      };
    }
    options.hooks.onRetry?.({
      layer: 'http',
      model: request.model,
      reason: verdict.reason,
      delayMs: wait,
      nextAttempt: account.attempts + 1,
    });
    // A long sleep: a server's wait of weeks, inside a deadline further off, must not overflow Node's timer.
    await sleepLong(wait, context.signal).catch((error: unknown) => {
      throw context.signal?.aborted ? context.signal.reason : error;
    });
  }
}

function describeOutcome(outcome: AttemptOutcome): string {
  switch (outcome.kind) {
    case 'message':
      return '';
    case 'status':
      return `HTTP ${outcome.status}${outcome.errorType ? ` ${outcome.errorType}` : ''}: ${outcome.errorMessage}`;
    case 'stream-error':
      return `${outcome.errorType} event ${outcome.beforeContent ? 'before' : 'after'} content: ${outcome.errorMessage}`;
    case 'unreadable':
      return outcome.detail;
    case 'connection':
      return `connection failed (${outcome.phase}): ${outcome.detail}`;
    case 'deadline':
      return outcome.detail;
    case 'aborted':
      return 'aborted by the caller';
    default:
      return outcome satisfies never;
  }
}

function finalFailure(
  outcome: Exclude<AttemptOutcome, { kind: 'message' | 'aborted' }>,
  reason: string,
  history: readonly string[],
): FailureDetail {
  const summary = `${describeOutcome(outcome)} (${reason}; ${history.length} attempt${history.length === 1 ? '' : 's'}${history.length > 1 ? `: ${history.slice(0, -1).join('; ')}` : ''})`;
  if (outcome.kind === 'deadline') return timeout('deadline', outcome.detail, history.slice(0, -1));
  if (outcome.kind === 'connection' && outcome.phase !== 'network' && outcome.phase !== 'stream') {
    return {
      kind: 'timeout',
      phase: outcome.phase,
      lastError: describeOutcome(outcome),
      message: `timed out: ${summary}`,
    };
  }
  const status =
    outcome.kind === 'status' || outcome.kind === 'unreadable'
      ? outcome.status
      : outcome.kind === 'stream-error'
        ? 200
        : undefined;
  const errorType = outcome.kind === 'status' || outcome.kind === 'stream-error' ? outcome.errorType : undefined;
  return { kind: 'http', status, errorType, message: summary };
}

function timeout(phase: 'deadline' | 'retry-wait', detail: string, history: readonly string[]): FailureDetail {
  const before = history.length > 0 ? ` (before that: ${history.join('; ')})` : '';
  return {
    kind: 'timeout',
    phase,
    lastError: history.at(-1),
    message: `timed out before the caller's deadline: ${detail}${before}`,
  };
}
