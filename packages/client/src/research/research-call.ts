/**
 * A research call (spec: "Research is done in two passes"). Pass 1 gathers on the large tier
 * with server tools and returns prose with `[n]` citations, continuing while the service
 * pauses the turn (`pause_turn`) and the deadline allows. `Insufficient data` ends the call
 * there, as its own outcome. Pass 2 shapes the prose with a separate structured call; a
 * rejected answer is retried by pass 2 alone, so the research is kept.
 */
import type { ContentBlock, ContentBlockParam, MessageRequest } from '@mms/protocol';
import { textOf } from '../answer/classify-answer.js';
import { doubledOutputBudget } from '../budgets.js';
import type { FailureDetail } from '../call-account.js';
import type { CallContext } from '../call-context.js';
import type { ResolvedModel } from '../client-options.js';
import { checkBeforeSend } from '../pre-send-checks.js';
import { isInsufficientData } from '../prompts.js';
import type { ResearchNotes } from '../results.js';
import { sendWithRetries } from '../transport/send-with-retries.js';
import { mapCitations } from './citations.js';

export interface PassOneSettings {
  request: MessageRequest;
  model: ResolvedModel;
  maxContinuations: number;
}

export type PassOneResult = { ok: true; notes: ResearchNotes } | { ok: false; failure: FailureDetail };

export async function researchPassOne(settings: PassOneSettings, context: CallContext): Promise<PassOneResult> {
  const { model } = settings;
  checkBeforeSend(settings.request, model, { bufferTokens: context.options.bufferTokens, checkPromptSize: true });
  let request = settings.request;
  /** The assistant turn so far: paused parts, then the rest. */
  const turn: ContentBlock[] = [];
  let continuations = 0;
  let grown = false;
  for (;;) {
    const sent = await sendWithRetries(request, context);
    if (!sent.ok) return sent;
    const message = sent.folded.message;
    if (message.stop_reason === 'pause_turn') {
      turn.push(...message.content);
      if (continuations >= settings.maxContinuations) return { ok: false, failure: { kind: 'truncated', maxTokens: request.max_tokens, message: `the research turn paused ${continuations + 1} times; the limit is ${settings.maxContinuations} continuations` } };
      continuations += 1;
      request = resumed(settings.request, turn, request.max_tokens);
      context.options.hooks.onRetry?.({ layer: 'continuation', model: model.id, reason: `pause_turn (continuation ${continuations})`, delayMs: 0, nextAttempt: context.account.attempts + 1 });
      checkBeforeSend(request, model, { bufferTokens: context.options.bufferTokens, checkPromptSize: false });
      continue;
    }
    if (message.stop_reason === 'max_tokens') {
      const next = grown ? undefined : doubledOutputBudget(request.max_tokens, { modelMaxOutputTokens: model.maxOutputTokens, contextWindow: model.keptWindow, inputTokens: message.usage.input_tokens, bufferTokens: context.options.bufferTokens });
      if (next === undefined) return { ok: false, failure: { kind: 'truncated', maxTokens: request.max_tokens, message: `the research prose was cut off at max_tokens ${request.max_tokens}` } };
      context.options.hooks.onRetry?.({ layer: 'answer', model: model.id, reason: `research truncated at max_tokens ${request.max_tokens}; retrying with ${next}`, delayMs: 0, nextAttempt: context.account.attempts + 1 });
      grown = true;
      request = { ...request, max_tokens: next };
      continue;
    }
    turn.push(...message.content);
    const prose = finalProse(turn);
    if (message.stop_reason === 'refusal' || prose === '') {
      return { ok: false, failure: { kind: 'declined', text: prose, stopReason: message.stop_reason, message: `research pass 1 gave no prose (stop_reason ${message.stop_reason})` } };
    }
    const { sources, citations, unresolved } = mapCitations(prose, turn);
    const notes: ResearchNotes = { prose, sources, citations, unresolvedCitations: unresolved };
    if (isInsufficientData(prose)) return { ok: false, failure: { kind: 'insufficient_data', text: prose, research: notes, message: 'the model answered "Insufficient data"' } };
    return { ok: true, notes };
  }
}

/**
 * Resuming (decision 0006): the turn so far goes back as the final assistant message, as the
 * public API does; the service takes a final assistant turn that ends on a server tool's result
 * as a resume, not a prefill, and its reply holds only the new blocks, appended here.
 */
function resumed(original: MessageRequest, turn: readonly ContentBlock[], maxTokens: number): MessageRequest {
  return { ...original, max_tokens: maxTokens, messages: [...original.messages, { role: 'assistant', content: turn as unknown as ContentBlockParam[] }] };
}

/** The answer is the text after the last tool result; earlier text narrates the searching. */
function finalProse(content: readonly ContentBlock[]): string {
  const lastResult = content.findLastIndex((block) => block.type.endsWith('_tool_result') || block.type === 'server_tool_use');
  return textOf(content.slice(lastResult + 1)) || textOf([...content]);
}
