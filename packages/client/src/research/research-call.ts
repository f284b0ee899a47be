/**
 * A research call (spec: "Research is done in two passes"). Pass 1 gathers on the large tier
 * with server tools and returns prose with `[n]` citations, continuing while the service
 * pauses the turn (`pause_turn`) and the deadline allows. `Insufficient data` ends the call
 * there, as its own outcome. Pass 2 shapes the prose with a separate structured call; a
 * rejected answer is retried by pass 2 alone, so the research is kept.
 * Once the first request is paid for, nothing throws: every ending is a typed failure carrying
 * what was spent and what was gathered (sources, and prose when there is any).
 */
import type { ContentBlock, Message, MessageRequest, Usage } from '@model-messages/protocol';
import { textOf } from '../answer/classify-answer.js';
import { spendUnreadableRetry } from '../answer/unreadable-retry.js';
import { outputBudgetGrowth } from '../budgets.js';
import type { FailureDetail } from '../call-account.js';
import type { CallContext } from '../call-context.js';
import type { ResolvedModel } from '../client-options.js';
import { checkBeforeSend, preSendProblem, retryNotSent } from '../pre-send-checks.js';
import { isInsufficientData } from '../prompts.js';
import type { ResearchNotes } from '../results.js';
import { sendWithRetries, type UnreadableBody } from '../transport/send-with-retries.js';
import { mapCitations } from './citations.js';
import { continuation, usesSpent, withFetchShare, type ContinuationBudget } from './continuation.js';

export interface PassOneSettings {
  request: MessageRequest;
  model: ResolvedModel;
  maxContinuations: number;
}

export type PassOneResult = { ok: true; notes: ResearchNotes } | { ok: false; failure: FailureDetail };

/** What pass 1 has gathered so far, across its requests. */
interface PassOneState {
  readonly settings: PassOneSettings;
  readonly budget: ContinuationBudget;
  /** The request last sent. */
  request: MessageRequest;
  /** The assistant turn so far: paused parts, then the rest. */
  readonly turn: ContentBlock[];
  readonly pausedUsages: Usage[];
  continuations: number;
  /**
   * What spent pass 1's one answer-level retry, if anything: a truncation or an unreadable 2xx
   * (spec, Client retry policy 2: a successful response with no usable answer "is retried at most
   * once"). Continuations after pause_turn are no retries: the turn is not over.
   */
  retriedFor: string | undefined;
}

/** Another request to send, or the end of pass 1. */
type Step = { next: MessageRequest } | PassOneResult;

export async function researchPassOne(settings: PassOneSettings, context: CallContext): Promise<PassOneResult> {
  const budget = { model: settings.model, bufferTokens: context.options.bufferTokens };
  // Nothing is spent yet: a request that breaks a rule throws, like any call's first request.
  checkBeforeSend(settings.request, settings.model, { ...budget, checkPromptSize: true });
  const state: PassOneState = {
    settings,
    budget,
    request: settings.request,
    turn: [],
    pausedUsages: [],
    continuations: 0,
    retriedFor: undefined,
  };
  for (;;) {
    const sent = await sendWithRetries(state.request, context);
    const step = sent.ok
      ? afterReply(state, sent.folded.message, context)
      : sent.unreadable
        ? retryUnreadable(state, sent.failure, sent.unreadable, context)
        : failed(state, sent.failure);
    if (!('next' in step)) return step;
    state.request = step.next;
  }
}

function afterReply(state: PassOneState, message: Message, context: CallContext): Step {
  if (message.stop_reason === 'pause_turn') return resumePaused(state, message, context);
  if (message.stop_reason === 'max_tokens') return retryTruncated(state, message, context);
  return ended(state, message);
}

/** The service paused the turn: continue it with the uses left, or end as `paused` saying why. */
function resumePaused(state: PassOneState, message: Message, context: CallContext): Step {
  const { settings, budget } = state;
  state.turn.push(...message.content);
  state.pausedUsages.push(message.usage);
  if (state.continuations >= settings.maxContinuations)
    return paused(
      state,
      'continuation-limit',
      `the service paused the turn again and maxContinuations is ${settings.maxContinuations}`,
    );
  const next = continuation(
    settings.request,
    state.turn,
    state.request.max_tokens,
    usesSpent(state.turn, state.pausedUsages),
    budget,
  );
  if (!next.ok) return paused(state, 'unresumable', next.why);
  // The paused turn (search results, fetched pages) goes back in the prompt: the continuation must fit like any request (decision 0009).
  const problem = preSendProblem(next.request, settings.model, { ...budget, checkPromptSize: true });
  if (problem)
    return paused(state, 'unresumable', `the continuation was not sent (${problem.code}): ${problem.message}`);
  state.continuations += 1;
  context.options.hooks.onRetry?.({
    layer: 'continuation',
    model: settings.model.id,
    reason: `pause_turn (continuation ${state.continuations}; ${next.tools})`,
    delayMs: 0,
    nextAttempt: context.account.attempts + 1,
  });
  return { next: next.request };
}

/** The prose was cut by max_tokens: one retry with it doubled (spec, Client retry policy 2), or `truncated` saying why not. */
function retryTruncated(state: PassOneState, message: Message, context: CallContext): Step {
  const { request, budget } = state;
  const { model } = state.settings;
  const growth = state.retriedFor
    ? { next: undefined, why: `pass 1 already spent its one retry (${state.retriedFor})` }
    : outputBudgetGrowth(request.max_tokens, {
        modelMaxOutputTokens: model.maxOutputTokens,
        contextWindow: model.keptWindow,
        inputTokens: message.usage.input_tokens,
        bufferTokens: budget.bufferTokens,
      });
  if (growth.next === undefined) return truncated(state, growth.why);
  // A larger max_tokens leaves less headroom for fetched pages: the fetch share is recomputed.
  const retry = withFetchShare({ ...request, max_tokens: growth.next }, budget);
  const problem = preSendProblem(retry, model, { ...budget, checkPromptSize: false });
  if (problem) return truncated(state, retryNotSent(problem));
  context.options.hooks.onRetry?.({
    layer: 'answer',
    model: model.id,
    reason: `research truncated at max_tokens ${request.max_tokens}; retrying with ${growth.next}`,
    delayMs: 0,
    nextAttempt: context.account.attempts + 1,
  });
  state.retriedFor = `truncated at max_tokens ${request.max_tokens}`;
  return { next: retry };
}

/**
 * A 2xx whose body could not be read (issue 32): the request once more, as it was, if neither
 * pass 1 nor the call spent its one retry; else the HTTP layer's failure, saying why not. Not a
 * decline: pass 1 has no output tool to skip (spec, Client retry policy 4 counts per tool).
 */
function retryUnreadable(
  state: PassOneState,
  failure: FailureDetail,
  body: UnreadableBody,
  context: CallContext,
): Step {
  const spent = state.retriedFor
    ? `pass 1 already spent its one retry (${state.retriedFor})`
    : spendUnreadableRetry(context, state.settings.model.id, body);
  if (spent) return failed(state, { ...failure, message: `${failure.message}; not retried: ${spent}` });
  state.retriedFor = 'an unreadable 2xx';
  return { next: state.request };
}

/** The turn ended: its prose, `Insufficient data`, or no prose at all. */
function ended(state: PassOneState, message: Message): PassOneResult {
  state.turn.push(...message.content);
  const notes = notesOf(state.turn);
  if (message.stop_reason === 'refusal' || notes.prose === '') {
    return failed(state, {
      kind: 'declined',
      text: notes.prose,
      stopReason: message.stop_reason,
      message: `research pass 1 gave no prose (stop_reason ${message.stop_reason})`,
    });
  }
  if (isInsufficientData(notes.prose))
    return failed(state, {
      kind: 'insufficient_data',
      text: notes.prose,
      message: 'the model answered "Insufficient data"',
    });
  return { ok: true, notes };
}

function paused(state: PassOneState, reason: 'continuation-limit' | 'unresumable', why: string): PassOneResult {
  const count = state.continuations;
  return failed(state, {
    kind: 'paused',
    reason,
    continuations: count,
    message: `research pass 1 ended paused after ${count} continuation${count === 1 ? '' : 's'}: ${why}`,
  });
}

function truncated(state: PassOneState, why: string): PassOneResult {
  return failed(state, {
    kind: 'truncated',
    maxTokens: state.request.max_tokens,
    message: `the research prose was cut off at max_tokens ${state.request.max_tokens}; not retried: ${why}`,
  });
}

/** A failure that keeps what the turn gathered (sources, and prose when there is any). */
function failed(state: PassOneState, failure: FailureDetail): PassOneResult {
  return { ok: false, failure: state.turn.length > 0 ? { ...failure, research: notesOf(state.turn) } : failure };
}

/** The prose and its citations; sources gathered so far, even when the turn has no prose yet. */
function notesOf(turn: readonly ContentBlock[]): ResearchNotes {
  const prose = finalProse(turn);
  const { sources, citations, unresolved } = mapCitations(prose, turn);
  return { prose, sources, citations, unresolvedCitations: unresolved };
}

/** The answer is the text after the last tool result; earlier text narrates the searching. */
function finalProse(content: readonly ContentBlock[]): string {
  const lastResult = content.findLastIndex(
    (block) => block.type.endsWith('_tool_result') || block.type === 'server_tool_use',
  );
  return textOf(content.slice(lastResult + 1)) || textOf([...content]);
}
