/**
 * The Client's options and their resolution into model profiles, timers and retry settings.
 * Everything the spec leaves to the client (thinking list, timeouts, retries) is configuration.
 */
import type { ModelGeneration, ModelProfile, ModelTier } from '@model-messages/protocol';
import {
  BUFFER_TOKENS,
  DEFAULT_OUTPUT_TOKENS,
  defaultOutputBudget,
  keptContextWindow,
  type OutputBudgetLimit,
} from './budgets.js';
import { ClientConfigError } from './errors.js';
import type { ClientHooks } from './hooks.js';

export interface ModelSpec {
  /** The identifier or alias sent as `model` (spec: aliases are preferred over snapshots). */
  id: string;
  /** Default `newer`. */
  generation?: ModelGeneration;
  /** Tokens; default 200,000 (the mid tier is budgeted at 200,000 whatever its window). */
  contextWindow?: number;
  /** The model's largest `max_tokens`; default the tier's output budget (64k, 64k, 128k). */
  maxOutputTokens?: number;
}

/** A model outside the three configured tiers (a tier move candidate, say). */
export interface TieredModelSpec extends ModelSpec {
  tier: ModelTier;
}

export interface TransportTimeouts {
  /** Until the response headers arrive. Default 60 s. */
  connectMs?: number;
  /** From the headers to the first stream event. Default 60 s. */
  firstEventMs?: number;
  /** Between two stream events (pings count). Default 60 s. */
  idleMs?: number;
}

export interface BackoffOptions {
  /** First retry's ceiling; doubles per retry. Default 500 ms. */
  initialMs?: number;
  /** Largest ceiling. Default 8 s. */
  maxMs?: number;
}

export interface ClientOptions {
  baseURL: string;
  apiKey: string;
  models: Record<ModelTier, string | ModelSpec>;
  /**
   * Small-tier model ids that also get `thinking: {type: "disabled"}` unless the caller asks to
   * think (spec rule 5). Every small model of the newer generation gets it anyway, configured or
   * passed to a call as a TieredModelSpec (thinking-policy.ts). A mid or large model here is a
   * ClientConfigError: those tiers never receive `disabled`.
   */
  thinkingDisabledModels?: readonly string[];
  /** A call's time limit when the caller gives no deadline. Default 10 minutes. */
  timeoutMs?: number;
  timeouts?: TransportTimeouts;
  /** HTTP-layer retries after the first attempt. Default 4. */
  maxRetries?: number;
  backoff?: BackoffOptions;
  /**
   * Tokens kept free in every request's window (spec, Limits: "buffer (client)"). Default 5,000.
   * The prompt check allows (window - max_tokens - buffer) x 4 characters.
   */
  bufferTokens?: number;
  headers?: Record<string, string>;
  hooks?: ClientHooks;
  /** Replaces the global fetch (a proxy, a test double). */
  fetch?: typeof fetch;
  /** Source of jitter in [0, 1); default Math.random. */
  random?: () => number;
}

export interface ResolvedModel extends ModelProfile {
  /** The window the client budgets with (the mid tier keeps 200k). */
  keptWindow: number;
  /**
   * Output budget when a call names none: the tier default, within the model's limit and at most
   * three quarters of what the window leaves after the buffer (budgets.ts defaultOutputBudget).
   */
  defaultMaxTokens: number;
  /** What set `defaultMaxTokens`, in words with the numbers: the client's report of a capped default (issue 32). */
  defaultMaxTokensReason: { limitedBy: OutputBudgetLimit; explanation: string };
}

export interface ResolvedOptions {
  baseURL: string;
  apiKey: string;
  tiers: Record<ModelTier, ResolvedModel>;
  thinkingDisabled: ReadonlySet<string>;
  timeoutMs: number;
  timeouts: Required<TransportTimeouts>;
  maxRetries: number;
  backoff: Required<BackoffOptions>;
  bufferTokens: number;
  headers: Record<string, string>;
  hooks: ClientHooks;
  fetch: typeof fetch;
  random: () => number;
}

const DEFAULT_CONTEXT_WINDOW = 200_000;
const TIERS: readonly ModelTier[] = ['small', 'mid', 'large'];

/** `bufferTokens`: the Client's, since the default output budget is what the window leaves after it. */
export function resolveModel(
  tier: ModelTier,
  spec: string | ModelSpec,
  bufferTokens: number = BUFFER_TOKENS,
): ResolvedModel {
  const full = typeof spec === 'string' ? { id: spec } : spec;
  const contextWindow = full.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const maxOutputTokens = full.maxOutputTokens ?? DEFAULT_OUTPUT_TOKENS[tier];
  for (const [name, value] of [
    ['contextWindow', contextWindow],
    ['maxOutputTokens', maxOutputTokens],
  ] as const) {
    if (!Number.isInteger(value) || value < 1)
      throw new ClientConfigError(`models.${tier}.${name}: must be a positive integer, got ${value}`);
  }
  if (full.id === '') throw new ClientConfigError(`models.${tier}.id: must not be empty`);
  const keptWindow = keptContextWindow(tier, contextWindow);
  const { tokens, limitedBy, explanation } = defaultOutputBudget({ tier, keptWindow, maxOutputTokens }, bufferTokens);
  return {
    id: full.id,
    tier,
    generation: full.generation ?? 'newer',
    contextWindow,
    maxOutputTokens,
    keptWindow,
    defaultMaxTokens: tokens,
    defaultMaxTokensReason: { limitedBy, explanation },
  };
}

export function resolveOptions(options: ClientOptions): ResolvedOptions {
  if (!/^https?:\/\//.test(options.baseURL))
    throw new ClientConfigError(`baseURL: must start with http:// or https://, got "${options.baseURL}"`);
  if (!options.apiKey) throw new ClientConfigError('apiKey: must not be empty');
  const bufferTokens = nonNegative('bufferTokens', options.bufferTokens ?? BUFFER_TOKENS);
  const tiers = Object.fromEntries(
    TIERS.map((tier) => [tier, resolveModel(tier, options.models[tier], bufferTokens)]),
  ) as Record<ModelTier, ResolvedModel>;
  const thinkingDisabled = new Set(options.thinkingDisabledModels ?? []);
  for (const model of Object.values(tiers)) assertThinkingListFits(model, thinkingDisabled);
  return {
    baseURL: options.baseURL.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    tiers,
    thinkingDisabled,
    timeoutMs: positive('timeoutMs', options.timeoutMs ?? 600_000),
    timeouts: {
      connectMs: positive('timeouts.connectMs', options.timeouts?.connectMs ?? 60_000),
      firstEventMs: positive('timeouts.firstEventMs', options.timeouts?.firstEventMs ?? 60_000),
      idleMs: positive('timeouts.idleMs', options.timeouts?.idleMs ?? 60_000),
    },
    maxRetries: nonNegative('maxRetries', options.maxRetries ?? 4),
    backoff: {
      initialMs: positive('backoff.initialMs', options.backoff?.initialMs ?? 500),
      maxMs: positive('backoff.maxMs', options.backoff?.maxMs ?? 8_000),
    },
    bufferTokens,
    headers: options.headers ?? {},
    hooks: options.hooks ?? {},
    fetch: options.fetch ?? globalThis.fetch,
    random: options.random ?? Math.random,
  };
}

/** Spec rule 5: "Mid and large tiers never receive `disabled`", whatever their generation. */
export function assertThinkingListFits(
  model: Pick<ResolvedModel, 'id' | 'tier' | 'generation'>,
  thinkingDisabled: ReadonlySet<string>,
): void {
  if (model.tier === 'small' || !thinkingDisabled.has(model.id)) return;
  throw new ClientConfigError(
    `thinkingDisabledModels: "${model.id}" is a ${model.tier}-tier model (${model.generation} generation); mid and large models never receive thinking "disabled" (spec rule 5)`,
  );
}

function positive(name: string, value: number): number {
  if (!(value > 0) || !Number.isFinite(value))
    throw new ClientConfigError(`${name}: must be a positive number, got ${value}`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0)
    throw new ClientConfigError(`${name}: must be a non-negative integer, got ${value}`);
  return value;
}
