/**
 * The HTTP layer's retry decision (spec: Errors, "Statuses treated as retryable"; Client retry
 * policy 1), as a ladder of one-line rules read top to bottom: the first rule that speaks
 * decides. How long to wait is retry-delay.ts's business; sending is stream-attempt.ts's.
 */
import type { AttemptOutcome } from './stream-attempt.js';

/** Spec: "Statuses treated as retryable by the HTTP layer: 502, 503, 504, 429, 529, 500." */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504, 529]);

/**
 * The error types of those statuses (500 and 502 api_error, 503 and 529 overloaded_error, 429
 * rate_limit_error, 504 timeout_error), retried as an `error` event before any content. An mms
 * stream opens at admission (its docs/decisions/0015), so a failure that a JSON caller gets as
 * one of those statuses reaches a stream as one of these events: retrying the statuses but not
 * the events would make the same failure retryable or not by the reply's form.
 */
export const RETRYABLE_EVENT_TYPES: ReadonlySet<string> = new Set([
  'api_error',
  'overloaded_error',
  'rate_limit_error',
  'timeout_error',
]);

export interface Verdict {
  retry: boolean;
  reason: string;
}

export interface LadderContext {
  retriesLeft: number;
}

type Rule = (outcome: AttemptOutcome, context: LadderContext) => Verdict | undefined;

const retry = (reason: string): Verdict => ({ retry: true, reason });
const stop = (reason: string): Verdict => ({ retry: false, reason });
const shouldRetryHeader = (outcome: AttemptOutcome) =>
  outcome.kind === 'status' ? outcome.headers.get('x-should-retry') : null;

export const RETRY_LADDER: readonly Rule[] = [
  (outcome) => (outcome.kind === 'message' ? stop('a message arrived') : undefined),
  // Spec, Client retry policy 2: a 2xx with no usable answer is the layer above's, retried at most once (issue 32).
  (outcome) =>
    outcome.kind === 'unreadable'
      ? stop('an unreadable 2xx is no transport failure: the layer above retries it at most once')
      : undefined,
  (outcome) => (outcome.kind === 'aborted' ? stop('the caller aborted') : undefined),
  (outcome) => (outcome.kind === 'deadline' ? stop('the deadline came during the attempt') : undefined),
  (_, context) => (context.retriesLeft <= 0 ? stop('no retries left') : undefined),
  (outcome) => (shouldRetryHeader(outcome) === 'true' ? retry('the service sent x-should-retry: true') : undefined),
  (outcome) => (shouldRetryHeader(outcome) === 'false' ? stop('the service sent x-should-retry: false') : undefined),
  (outcome) =>
    outcome.kind === 'status' && RETRYABLE_STATUSES.has(outcome.status)
      ? retry(`HTTP ${outcome.status} is retryable`)
      : undefined,
  (outcome) =>
    outcome.kind === 'connection' ? retry(`the connection failed (${outcome.phase}): ${outcome.detail}`) : undefined,
  (outcome) =>
    outcome.kind === 'stream-error' && outcome.beforeContent && RETRYABLE_EVENT_TYPES.has(outcome.errorType)
      ? retry(`an ${outcome.errorType} event came before any content`)
      : undefined,
  (outcome) =>
    stop(
      outcome.kind === 'stream-error'
        ? `an ${outcome.errorType} event ${outcome.beforeContent ? 'before' : 'after'} content is not retried`
        : 'not retryable',
    ),
];

export function decideRetry(outcome: AttemptOutcome, context: LadderContext): Verdict {
  for (const rule of RETRY_LADDER) {
    const verdict = rule(outcome, context);
    if (verdict) return verdict;
  }
  return stop('not retryable');
}
