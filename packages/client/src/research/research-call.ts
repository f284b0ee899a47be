/**
 * A research call (spec: "Research is done in two passes"). Pass 1 gathers on the large tier
 * with server tools and returns prose with `[n]` citations, continuing while the service
 * pauses the turn (`pause_turn`) and the deadline allows. `Insufficient data` ends the call
 * there, as its own outcome. Pass 2 shapes the prose with a separate structured call; a
 * rejected answer is retried by pass 2 alone, so the research is kept.
 * Once the first request is paid for, nothing throws: every ending is a typed failure carrying
 * what was spent and what was gathered (sources, and prose when there is any).
 */
import type { ContentBlock, MessageRequest, Usage } from '@mms/protocol';
import { textOf } from '../answer/classify-answer.js';
import { outputBudgetGrowth } from '../budgets.js';
import type { FailureDetail } from '../call-account.js';
import type { CallContext } from '../call-context.js';
import type { ResolvedModel } from '../client-options.js';
import { checkBeforeSend, preSendProblem } from '../pre-send-checks.js';
import { isInsufficientData } from '../prompts.js';
import type { ResearchNotes } from '../results.js';
import { sendWithRetries } from '../transport/send-with-retries.js';
import { mapCitations } from './citations.js';
import { continuation, usesSpent, withFetchShare } from './continuation.js';

export interface PassOneSettings {
  request: MessageRequest;
  model: ResolvedModel;
  maxContinuations: number;
}

export type PassOneResult = { ok: true; notes: ResearchNotes } | { ok: false; failure: FailureDetail };

export async function researchPassOne(settings: PassOneSettings, context: CallContext): Promise<PassOneResult> {
  const { model } = settings;
  const budget = { model, bufferTokens: context.options.bufferTokens };
  // Nothing is spent yet: a request that breaks a rule throws, like any call's first request.
  checkBeforeSend(settings.request, model, { ...budget, checkPromptSize: true });
  let request = settings.request;
  /** The assistant turn so far: paused parts, then the rest. */
  const turn: ContentBlock[] = [];
  const pausedUsages: Usage[] = [];
  let continuations = 0;
  let grown = false;
  const failed = (failure: FailureDetail): PassOneResult => ({ ok: false, failure: turn.length > 0 ? { ...failure, research: notesOf(turn) } : failure });
  for (;;) {
    const sent = await sendWithRetries(request, context);
    if (!sent.ok) return failed(sent.failure);
    const message = sent.folded.message;
    if (message.stop_reason === 'pause_turn') {
      turn.push(...message.content);
      pausedUsages.push(message.usage);
      const paused = (reason: 'continuation-limit' | 'unresumable', why: string) => failed({ kind: 'paused', reason, continuations, message: `research pass 1 ended paused after ${continuations} continuation${continuations === 1 ? '' : 's'}: ${why}` });
      if (continuations >= settings.maxContinuations) return paused('continuation-limit', `the service paused the turn again and maxContinuations is ${settings.maxContinuations}`);
      const next = continuation(settings.request, turn, request.max_tokens, usesSpent(turn, pausedUsages), budget);
      if (!next.ok) return paused('unresumable', next.why);
      const problem = preSendProblem(next.request, model, { ...budget, checkPromptSize: false });
      if (problem) return paused('unresumable', `the continuation was not sent: ${problem.message}`);
      continuations += 1;
      context.options.hooks.onRetry?.({ layer: 'continuation', model: model.id, reason: `pause_turn (continuation ${continuations}; ${next.tools})`, delayMs: 0, nextAttempt: context.account.attempts + 1 });
      request = next.request;
      continue;
    }
    if (message.stop_reason === 'max_tokens') {
      const growth = grown ? { next: undefined, why: 'it was already retried once with max_tokens doubled' } : outputBudgetGrowth(request.max_tokens, { modelMaxOutputTokens: model.maxOutputTokens, contextWindow: model.keptWindow, inputTokens: message.usage.input_tokens, bufferTokens: budget.bufferTokens });
      const truncated = (why: string) => failed({ kind: 'truncated', maxTokens: request.max_tokens, message: `the research prose was cut off at max_tokens ${request.max_tokens}; not retried: ${why}` });
      if (growth.next === undefined) return truncated(growth.why);
      // A larger max_tokens leaves less headroom for fetched pages: the fetch share is recomputed.
      const retry = withFetchShare({ ...request, max_tokens: growth.next }, budget);
      const problem = preSendProblem(retry, model, { ...budget, checkPromptSize: false });
      if (problem) return truncated(`the retry was not sent: ${problem.message}`);
      context.options.hooks.onRetry?.({ layer: 'answer', model: model.id, reason: `research truncated at max_tokens ${request.max_tokens}; retrying with ${growth.next}`, delayMs: 0, nextAttempt: context.account.attempts + 1 });
      grown = true;
      request = retry;
      continue;
    }
    turn.push(...message.content);
    const notes = notesOf(turn);
    if (message.stop_reason === 'refusal' || notes.prose === '') {
      return failed({ kind: 'declined', text: notes.prose, stopReason: message.stop_reason, message: `research pass 1 gave no prose (stop_reason ${message.stop_reason})` });
    }
    if (isInsufficientData(notes.prose)) return failed({ kind: 'insufficient_data', text: notes.prose, message: 'the model answered "Insufficient data"' });
    return { ok: true, notes };
  }
}

/** The prose and its citations; sources gathered so far, even when the turn has no prose yet. */
function notesOf(turn: readonly ContentBlock[]): ResearchNotes {
  const prose = finalProse(turn);
  const { sources, citations, unresolved } = mapCitations(prose, turn);
  return { prose, sources, citations, unresolvedCitations: unresolved };
}

/** The answer is the text after the last tool result; earlier text narrates the searching. */
function finalProse(content: readonly ContentBlock[]): string {
  const lastResult = content.findLastIndex((block) => block.type.endsWith('_tool_result') || block.type === 'server_tool_use');
  return textOf(content.slice(lastResult + 1)) || textOf([...content]);
}
