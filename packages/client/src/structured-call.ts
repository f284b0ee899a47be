/**
 * A structured call through its layers: the HTTP layer (send-with-retries), the answer layer
 * (at most one retry for a response with no usable answer), then the caller's guardrails (a
 * rejected answer retried once, keeping its context), then the caller's fallback.
 * `Insufficient data`, where the envelope allows it, stops every layer: it is not retried, not
 * a decline, and no fallback replaces it (spec, Research conventions: it "is handled before any
 * database write").
 */
import type { MessageRequest, ToolUseBlock } from '@model-messages/protocol';
import { answerRetry, replayWithError } from './answer/answer-retry.js';
import { classifyAnswer, unreadableOutcome, type RetryableOutcome } from './answer/classify-answer.js';
import type { FailureDetail } from './call-account.js';
import type { CallContext } from './call-context.js';
import type { ResolvedModel } from './client-options.js';
import { preSendProblem, retryNotSent } from './pre-send-checks.js';
import type { CallFailure, CallResult } from './results.js';
import type { JsonSchema } from './strict-schema.js';
import { sendWithRetries } from './transport/send-with-retries.js';

/** Returns why `value` is bad, or undefined to accept it. */
export type Guardrail<Value> = (value: Value) => string | undefined | Promise<string | undefined>;

/** Produces the value to use after `failure` (every kind except insufficient_data). */
export type Fallback<Value> = (failure: CallFailure) => Value | Promise<Value>;

export interface StructuredRun<Value> {
  request: MessageRequest;
  model: ResolvedModel;
  toolName: string;
  /** The caller's schema, original constraints included: answers are validated against it. */
  schema: JsonSchema;
  /** Whether the tool's input is the `{answer: ...}` envelope with the Insufficient data escape. */
  envelope: boolean;
  guardrails: readonly Guardrail<Value>[];
}

export type Outcome<Value> = { ok: true; value: Value } | { ok: false; failure: FailureDetail };

type LayerResult =
  { ok: true; value: unknown; toolUse: ToolUseBlock; request: MessageRequest } | { ok: false; failure: FailureDetail };

export async function runStructured<Value>(run: StructuredRun<Value>, context: CallContext): Promise<Outcome<Value>> {
  const first = await answerLayer(run.request, run, context);
  if (!first.ok) return first;
  const reasons = await rejections(run.guardrails, first.value as Value);
  if (reasons.length === 0) return { ok: true, value: first.value as Value };
  const feedback = `The answer was rejected: ${reasons.join('; ')}. Call "${run.toolName}" again with a corrected answer.`;
  const retry = replayWithError(first.request, first.toolUse, feedback);
  // The replayed answer and its error result grow the prompt: the retry must still fit (decision 0009).
  const problem = preSendProblem(retry, run.model, {
    bufferTokens: context.options.bufferTokens,
    checkPromptSize: true,
  });
  if (problem)
    return {
      ok: false,
      failure: {
        kind: 'rejected',
        reasons,
        value: first.value,
        message: `rejected by the guardrails: ${reasons.join('; ')}; ${retryNotSent(problem)}`,
      },
    };
  context.options.hooks.onRetry?.({
    layer: 'guardrail',
    model: run.model.id,
    reason: reasons.join('; '),
    delayMs: 0,
    nextAttempt: context.account.attempts + 1,
  });
  const second = await answerLayer(retry, run, context);
  if (!second.ok) return second;
  const again = await rejections(run.guardrails, second.value as Value);
  if (again.length === 0) return { ok: true, value: second.value as Value };
  return {
    ok: false,
    failure: {
      kind: 'rejected',
      reasons: again,
      value: second.value,
      message: `rejected twice by the guardrails: first ${reasons.join('; ')}; then ${again.join('; ')}`,
    },
  };
}

/**
 * HTTP layer, then classification; one retry at most for a response with no usable answer: a
 * changed request, or for an unreadable 2xx the same one, once in the whole call (issue 32).
 */
async function answerLayer<Value>(
  request: MessageRequest,
  run: StructuredRun<Value>,
  context: CallContext,
): Promise<LayerResult> {
  let current = request;
  for (let retried = false; ; retried = true) {
    const sent = await sendWithRetries(current, context);
    if (!sent.ok && !sent.unreadable) return sent;
    const outcome = sent.ok ? classifyAnswer(sent.folded, run) : unreadableOutcome(sent.failure, sent.unreadable);
    if (outcome.kind === 'answer')
      return { ok: true, value: outcome.value, toolUse: outcome.toolUse, request: current };
    if (outcome.kind === 'insufficient_data')
      return {
        ok: false,
        failure: {
          kind: 'insufficient_data',
          text: outcome.text,
          message: `the model answered "Insufficient data" (tool "${run.toolName}")`,
        },
      };
    // Spec, Client retry policy 4: a skipped tool counts, and "a 2xx response counts once, even when its JSON is invalid".
    if (outcome.kind === 'declined' || outcome.kind === 'unreadable') {
      context.declines.count(run.model.id, run.toolName);
      context.options.hooks.onDecline?.({
        model: run.model.id,
        tool: run.toolName,
        requestId: sent.ok ? sent.requestId : sent.unreadable?.requestId,
        text: outcome.kind === 'declined' ? outcome.text : '',
        ...(outcome.kind === 'unreadable' ? { unreadable: outcome.detail } : {}),
      });
    }
    if (retried) return { ok: false, failure: answerFailure(outcome, current, ' after the one retry') };
    const decision = answerRetry(current, outcome, run.toolName, {
      model: run.model,
      bufferTokens: context.options.bufferTokens,
      inputTokens: sent.ok ? sent.folded.message.usage.input_tokens : 0,
      unreadableRetrySpent: context.account.unreadableRetrySpent,
    });
    if (!decision.retry)
      return { ok: false, failure: answerFailure(outcome, current, `; not retried: ${decision.why}`) };
    // A decline or invalid retry adds turns to the prompt, so it must fit like any request (decision 0009). The
    // truncation retry keeps the prompt and grows max_tokens only as far as the service's own count allows.
    const problem = preSendProblem(decision.request, run.model, {
      bufferTokens: context.options.bufferTokens,
      checkPromptSize: outcome.kind !== 'truncated',
    });
    if (problem) return { ok: false, failure: answerFailure(outcome, current, `; ${retryNotSent(problem)}`) };
    if (outcome.kind === 'unreadable') context.account.unreadableRetrySpent = true;
    context.options.hooks.onRetry?.({
      layer: 'answer',
      model: run.model.id,
      reason: decision.reason,
      delayMs: 0,
      nextAttempt: context.account.attempts + 1,
    });
    current = decision.request;
  }
}

/** `note` says what became of the one retry: spent, skipped and why, or refused before sending. */
function answerFailure(outcome: RetryableOutcome, request: MessageRequest, note: string): FailureDetail {
  switch (outcome.kind) {
    case 'truncated':
      return {
        kind: 'truncated',
        maxTokens: request.max_tokens,
        message: `the answer was cut off at max_tokens ${request.max_tokens}${note}`,
      };
    case 'declined':
      return {
        kind: 'declined',
        text: outcome.text,
        stopReason: outcome.stopReason,
        message: `the model did not call its output tool (stop_reason ${outcome.stopReason})${note}`,
      };
    case 'invalid':
      return {
        kind: 'invalid',
        violation: outcome.violation,
        input: outcome.input,
        message: `the tool input failed the schema: ${outcome.violation}${note}`,
      };
    case 'unreadable':
      return { ...outcome.failure, message: `${outcome.failure.message}${note}` };
    default:
      return outcome satisfies never;
  }
}

async function rejections<Value>(guardrails: readonly Guardrail<Value>[], value: Value): Promise<string[]> {
  const reasons: string[] = [];
  for (const guardrail of guardrails) {
    const reason = await guardrail(value);
    if (reason !== undefined) reasons.push(reason);
  }
  return reasons;
}

/** The typed result, with the caller's fallback applied to any failure but insufficient data. */
export async function finish<Value>(
  outcome: Outcome<Value>,
  context: CallContext,
  fallback: Fallback<Value> | undefined,
): Promise<CallResult<Value>> {
  if (outcome.ok) return context.account.success(outcome.value);
  const failure = context.account.failure(outcome.failure);
  if (!fallback || failure.kind === 'insufficient_data') return failure;
  return context.account.success(await fallback(failure), failure);
}
