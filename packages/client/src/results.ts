/**
 * Typed outcomes (issue 5): a success carries its value, the usage summed over every attempt
 * and every request id; a failure is one of a closed set of kinds with the same detail.
 */
import type { StopReason, Usage } from '@model-messages/protocol';
import type { Citation, Source } from './research/citations.js';

export interface UsageSummary {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
  webSearchRequests: number;
  webFetchRequests: number;
}

export interface CallRecord {
  /** The model of the last attempt. */
  model: string;
  usage: UsageSummary;
  /** Every `request-id` the service gave, in order, failed attempts included. */
  requestIds: string[];
  /** HTTP attempts over every layer. */
  attempts: number;
}

export interface CallSuccess<Value> extends CallRecord {
  ok: true;
  value: Value;
  /** `fallback` when the caller's fallback produced the value after `failure`. */
  source: 'model' | 'fallback';
  failure?: CallFailure;
}

interface FailureBase extends CallRecord {
  ok: false;
  /** One line naming what went wrong, with the detail below in words. */
  message: string;
  /** For research calls: pass 1's notes, kept when pass 2 or a guardrail failed after it. */
  research?: ResearchNotes;
  /**
   * For research calls: the pass the call ended in, 1 (gathering prose) or 2 (shaping it), so
   * that a failure kind both passes can end in (`http`, `truncated`, `insufficient_data`...)
   * says which (the tier move check compares pass 1 on its own: issue 32).
   */
  researchPass?: 1 | 2;
}

/** Pass 1 of a research call: prose with `[n]` citations mapped to their sources. */
export interface ResearchNotes {
  prose: string;
  sources: Source[];
  citations: Citation[];
  /** `[n]` markers that name no source. */
  unresolvedCitations: number[];
}

export interface ResearchAnswer<Value> extends ResearchNotes {
  /** Pass 2's structured answer (or the fallback's value). */
  data: Value;
}

export type CallFailure =
  /** The model skipped its output tool (after the one retry the spec allows). */
  | (FailureBase & { kind: 'declined'; text: string; stopReason: StopReason | null })
  /** The output budget ran out and could not grow further (or the retry ran out too). */
  | (FailureBase & { kind: 'truncated'; maxTokens: number })
  /**
   * The tool input failed the caller's schema (after one retry naming the error). `input` is the
   * answer as the model gave it, unwrapped from the `Insufficient data` envelope when it had one
   * (the violation's path is in the input the model wrote: `/answer/name ...`).
   */
  | (FailureBase & { kind: 'invalid'; violation: string; input: unknown })
  /** A guardrail rejected the answer twice and there was no fallback. */
  | (FailureBase & { kind: 'rejected'; reasons: string[]; value: unknown })
  /**
   * Research pass 1 ended paused: the service paused the turn more often than
   * `maxContinuations` allows, or paused it where it cannot be resumed (a turn that does not end
   * on a server tool result would go back as a prefill with tools, rule 4). `research` holds the
   * sources and any prose gathered so far.
   */
  | (FailureBase & { kind: 'paused'; reason: 'continuation-limit' | 'unresumable'; continuations: number })
  /**
   * A request that follows others already paid for (research pass 2, say, whose prompt holds
   * pass 1's prose) broke a rule of the contract, so the client did not send it; `code` is what
   * the service would answer. The first request of a call throws PreSendError instead.
   */
  | (FailureBase & { kind: 'not_sent'; code: string })
  /** The model answered `Insufficient data`: nothing to write. */
  | (FailureBase & { kind: 'insufficient_data'; text: string })
  /** The service refused, or the transport failed, and retrying did not help or was not allowed. */
  | (FailureBase & { kind: 'http'; status: number | undefined; errorType: string | undefined })
  /** The call's deadline came first. `phase` says where the time ran out. */
  | (FailureBase & { kind: 'timeout'; phase: TimeoutPhase; lastError: string | undefined });

export type TimeoutPhase = 'connect' | 'first-event' | 'idle' | 'deadline' | 'retry-wait';

export type FailureKind = CallFailure['kind'];

export type CallResult<Value> = CallSuccess<Value> | CallFailure;

export function emptyUsage(): UsageSummary {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
    webSearchRequests: 0,
    webFetchRequests: 0,
  };
}

/** Adds a wire usage (possibly partial: a stream cut short) into a running summary. */
export function addUsage(summary: UsageSummary, usage: Partial<Usage> | undefined): void {
  if (!usage) return;
  summary.inputTokens += usage.input_tokens ?? 0;
  summary.outputTokens += usage.output_tokens ?? 0;
  summary.cacheCreationInputTokens += usage.cache_creation_input_tokens ?? 0;
  summary.cacheReadInputTokens += usage.cache_read_input_tokens ?? 0;
  summary.webSearchRequests += usage.server_tool_use?.web_search_requests ?? 0;
  summary.webFetchRequests += usage.server_tool_use?.web_fetch_requests ?? 0;
}
