/**
 * The client's public surface: what README.md documents ("What the package exports"), and
 * nothing else (issue 33). The rest stays internal to the modules that hold it (transport/,
 * research/, answer/, ...), where the package's own tests import it from.
 */
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
// Budgets: the default output budget and what set it, the prompt limit, the shrink to fit.
export {
  defaultOutputBudget,
  maxPromptChars,
  outputTokensToFit,
  type DefaultOutputBudget,
  type OutputBudgetLimit,
} from './budgets.js';
// For scripts and fakes that answer the client's structured calls: the tool input's envelope (decision 0010).
export { ANSWER_FIELD, wrapAnswerSchema } from './answer/answer-envelope.js';
export { assertStrictSchema, toStrictSchema, StrictSchemaError, type JsonSchema } from './strict-schema.js';
export { ClientConfigError, PreSendError } from './errors.js';
// The tier move check; the `mms compare` command itself is the package's `./compare-command` entry.
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
