export {
  Client,
  type CallOptions,
  type ClientMessageRequest,
  type ModelRef,
  type ResearchOptions,
  type StructuredOptions,
} from './client.js';
export type {
  BackoffOptions,
  ClientOptions,
  ModelSpec,
  ResolvedModel,
  TieredModelSpec,
  TransportTimeouts,
} from './client-options.js';
export type { AttemptInfo, ClientHooks, DeclineInfo, RetryInfo } from './hooks.js';
export type {
  CallFailure,
  CallRecord,
  CallResult,
  CallSuccess,
  FailureKind,
  ResearchAnswer,
  ResearchNotes,
  TimeoutPhase,
  UsageSummary,
} from './results.js';
export type { DeclineCounts } from './answer/decline-counter.js';
export type { Fallback, Guardrail } from './structured-call.js';
export type { Citation, CitationMap, Source } from './research/citations.js';
export { collectSources, citationMarkers, mapCitations } from './research/citations.js';
export {
  BUFFER_TOKENS,
  CHARACTERS_PER_TOKEN,
  DEFAULT_OUTPUT_SHARE,
  DEFAULT_OUTPUT_TOKENS,
  MID_TIER_KEPT_WINDOW,
  defaultOutputBudget,
  fetchContentTokens,
  keptContextWindow,
  maxPromptChars,
  outputBudgetGrowth,
  outputTokensToFit,
  type BudgetGrowth,
  type DefaultOutputBudget,
  type OutputBudgetLimit,
} from './budgets.js';
// For scripts and fakes that answer the client's structured calls: the tool input's envelope (decision 0010).
export { ANSWER_FIELD, wrapAnswerSchema } from './answer/answer-envelope.js';
export { assertStrictSchema, toStrictSchema, StrictSchemaError, type JsonSchema } from './strict-schema.js';
export { ClientConfigError, PreSendError } from './errors.js';
export { INSUFFICIENT_DATA, isInsufficientData } from './prompts.js';
export { RETRYABLE_STATUSES, RETRY_LADDER, decideRetry, type Verdict } from './transport/retry-ladder.js';
export { backoffCeilingMs, retryDelay, clampToDeadline } from './transport/retry-delay.js';
export { Deadline, attemptTimers, reserveMs } from './deadline.js';
// The parser lives in @model-messages/protocol (shared with the server); re-exported so this surface stays as it was.
export { SseParser, type SseFrame } from '@model-messages/protocol';
export {
  compareModels,
  type CallSite,
  type CallSiteReport,
  type CompareSettings,
  type ComparisonReport,
  type ModelStats,
  type RecordedInput,
  type StructuredCallSite,
} from './compare/compare-models.js';
export { formatComparisonTable } from './compare/comparison-table.js';
export type { ProseComparison, ProseStats, RecordedQuestion, ResearchCallSite } from './compare/research-call-site.js';
export { matchesKnownAnswer } from './compare/known-answer.js';
export { runCompareCommand, type CommandIo } from './cli/compare-command.js';
