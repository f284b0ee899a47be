/**
 * Token budgets (spec: Limits). Pure arithmetic, so that users can size prompts with the same
 * numbers the client checks before sending.
 */
import type { ModelTier } from '@model-messages/protocol';

/** Spec, Limits: "output budget default (client)". */
export const DEFAULT_OUTPUT_TOKENS: Readonly<Record<ModelTier, number>> = {
  small: 64_000,
  mid: 64_000,
  large: 128_000,
};

/** Spec, Limits: "buffer (client)". */
export const BUFFER_TOKENS = 5_000;

/** Spec, Limits: the mid tier supports a 1M window and the client keeps 200k of it. */
export const MID_TIER_KEPT_WINDOW = 200_000;

/** Spec, Limits: "4 is characters per token". */
export const CHARACTERS_PER_TOKEN = 4;

/** The window the client budgets with: all of it, except the mid tier's, which keeps 200k. */
export function keptContextWindow(tier: ModelTier, contextWindow: number): number {
  return tier === 'mid' ? Math.min(contextWindow, MID_TIER_KEPT_WINDOW) : contextWindow;
}

/**
 * Issue 32: the most of what the window leaves after the buffer that a tier's default output
 * budget may take; the rest stays for the prompt. With the spec's defaults on a window too small
 * for them (`examples/scripted.json`'s small model: 32,768 tokens against the tier's 64,000) the
 * formula allowed no prompt at all, and every call was refused. Three quarters: the spec's own
 * defaults on its 200k window leave the prompt at least a third of what is left after the buffer
 * (large: 200,000 - 128,000 - 5,000 = 67,000 of 195,000), so this cap never lowers a default
 * there, and on a smaller window the prompt keeps a quarter rather than nothing.
 */
export const DEFAULT_OUTPUT_SHARE = 0.75;

/** What set a model's default output budget: the tier's, the model's own limit, or the window. */
export type OutputBudgetLimit = 'tier-default' | 'model-limit' | 'context-window';

export interface DefaultOutputBudget {
  tokens: number;
  limitedBy: OutputBudgetLimit;
  /** One sentence with the numbers, for people reading a model's profile. */
  explanation: string;
}

export interface DefaultBudgetModel {
  tier: ModelTier;
  /** The window the client budgets with (see keptContextWindow). */
  keptWindow: number;
  /** The model's largest `max_tokens`. */
  maxOutputTokens: number;
}

/**
 * The `max_tokens` of a call that names none: the tier's default (spec, Limits), within the
 * model's limit, and at most DEFAULT_OUTPUT_SHARE of what the window leaves after the buffer (at
 * least 1). Only the default is capped: a `max_tokens` the caller gives is sent as given and
 * checked as it is.
 */
export function defaultOutputBudget(
  model: DefaultBudgetModel,
  bufferTokens: number = BUFFER_TOKENS,
): DefaultOutputBudget {
  const tierDefault = DEFAULT_OUTPUT_TOKENS[model.tier];
  const room = model.keptWindow - bufferTokens;
  const windowCap = Math.max(1, Math.floor(room * DEFAULT_OUTPUT_SHARE));
  const tokens = Math.min(tierDefault, model.maxOutputTokens, windowCap);
  const tierWords = `the ${model.tier} tier's default of ${tierDefault}`;
  if (tokens === tierDefault)
    return { tokens, limitedBy: 'tier-default', explanation: `${tierWords} tokens (spec, Limits)` };
  if (tokens === model.maxOutputTokens)
    return {
      tokens,
      limitedBy: 'model-limit',
      explanation: `the model's limit, ${tokens} tokens, below ${tierWords}`,
    };
  const window = `the ${model.keptWindow}-token window - ${bufferTokens} buffer = ${room}`;
  return {
    tokens,
    limitedBy: 'context-window',
    explanation:
      room < 2
        ? `${window} leaves no room for output and prompt; 1 token, and the prompt check refuses any prompt`
        : `three quarters of ${window}, so that ${room - tokens} tokens (${(room - tokens) * CHARACTERS_PER_TOKEN} characters) stay for the prompt; ${tierWords} would leave ${Math.max(0, room - Math.min(tierDefault, model.maxOutputTokens))}`,
  };
}

export interface PromptBudget {
  /** The window the client budgets with (see keptContextWindow). */
  contextWindow: number;
  /** The output budget of the request (its `max_tokens`). */
  maxOutputTokens: number;
  /** Defaults to BUFFER_TOKENS. */
  bufferTokens?: number;
}

/** Spec, Limits: (context_window - max_output_tokens - buffer) * 4; 0 when nothing is left. */
export function maxPromptChars(budget: PromptBudget): number {
  const tokens = budget.contextWindow - budget.maxOutputTokens - (budget.bufferTokens ?? BUFFER_TOKENS);
  return Math.max(0, tokens) * CHARACTERS_PER_TOKEN;
}

export interface FetchBudget extends PromptBudget {
  /** Characters of the prompt that goes with the fetches. */
  promptChars: number;
  /** The web fetch tool's `max_uses`. */
  maxUses: number;
}

/**
 * Spec, Limits: "divide the input headroom after the prompt across the allowed fetches", for
 * web fetch's `max_content_tokens`. 0 when the prompt leaves no headroom.
 */
export function fetchContentTokens(budget: FetchBudget): number {
  const promptTokens = Math.ceil(budget.promptChars / CHARACTERS_PER_TOKEN);
  const headroom =
    budget.contextWindow - promptTokens - budget.maxOutputTokens - (budget.bufferTokens ?? BUFFER_TOKENS);
  if (headroom <= 0 || budget.maxUses < 1) return 0;
  return Math.floor(headroom / budget.maxUses);
}

export interface FitBudget {
  /** The model's default output budget (a ResolvedModel's `defaultMaxTokens`, see defaultOutputBudget). */
  tierBudget: number;
  /** The window the client budgets with (see keptContextWindow). */
  contextWindow: number;
  /** Characters of the request's prompt (pre-send-checks.ts promptChars). */
  promptChars: number;
  /** Defaults to BUFFER_TOKENS. */
  bufferTokens?: number;
}

/**
 * The `max_tokens` of a call that names none and asks to shrink its output to fit
 * (`shrinkOutputToFit`): the tier's budget, cut to what the context leaves after the prompt and
 * the buffer (a model with an 8k window, say). Only on request: the spec's limit is the prompt's,
 * (window - the default output - buffer) x 4, and a silent cut turned a prompt over it into a
 * reply of a few thousand tokens. When the prompt leaves nothing, the tier's budget: the prompt
 * check then refuses it and says why.
 */
export function outputTokensToFit(budget: FitBudget): number {
  const room =
    budget.contextWindow -
    Math.ceil(budget.promptChars / CHARACTERS_PER_TOKEN) -
    (budget.bufferTokens ?? BUFFER_TOKENS);
  return room >= 1 ? Math.min(budget.tierBudget, room) : budget.tierBudget;
}

export interface GrowthLimits {
  /** The model's largest `max_tokens`. */
  modelMaxOutputTokens: number;
  /** The window the client budgets with. */
  contextWindow: number;
  /** The prompt's tokens as the service counted them (`usage.input_tokens`). */
  inputTokens: number;
  bufferTokens?: number;
}

export type BudgetGrowth = { next: number; why?: undefined } | { next: undefined; why: string };

/**
 * Spec, Client retry policy: a truncated answer is retried with `max_tokens` doubled, capped by
 * the model's limit and by what the context leaves. When it cannot grow, `why` says which cap
 * stopped it, so that a truncated failure never hides a skipped retry: at the tier defaults
 * (64k, 128k) the budget often already is the model's limit.
 */
export function outputBudgetGrowth(current: number, limits: GrowthLimits): BudgetGrowth {
  const buffer = limits.bufferTokens ?? BUFFER_TOKENS;
  const contextRoom = limits.contextWindow - limits.inputTokens - buffer;
  if (current >= limits.modelMaxOutputTokens)
    return {
      next: undefined,
      why: `max_tokens ${current} is already the model's limit (${limits.modelMaxOutputTokens})`,
    };
  if (contextRoom <= current) {
    return {
      next: undefined,
      why: `the context leaves no room to grow: ${limits.contextWindow} window - ${limits.inputTokens} input tokens - ${buffer} buffer = ${contextRoom}`,
    };
  }
  return { next: Math.min(current * 2, limits.modelMaxOutputTokens, contextRoom) };
}
