/**
 * The protocol's public surface, named one by one (issue 33): what the server and the client use,
 * and the types their signatures carry. A helper of one module stays in it.
 */
export {
  ALLOWED_CALLERS,
  API_VERSION,
  ERROR_CODE_HEADER,
  MAX_JSON_DEPTH,
  MAX_JSON_VALUES,
  MAX_REQUEST_BYTES,
  SCHEMA_LIMITS,
  SERVER_TOOL_NAMES,
  SERVER_TOOL_RESULT_TYPES,
  SERVER_TOOL_TYPES,
  SERVER_TOOL_VERSIONS,
  COMPACTION_TRIGGER,
  TOOL_SEARCH_LIMITS,
  STRICT_SCHEMA_KEYWORDS,
  VERSION_HEADER,
} from './constants.js';
export { API_VERSIONS, isApiVersion, type ApiVersion } from './api-versions.js';
export {
  ERROR_TABLE,
  ServiceError,
  errorEnvelope,
  type ErrorCode,
  type ErrorEnvelope,
  type ErrorType,
} from './errors.js';
export {
  countTokensRequest,
  messageRequest,
  toolParam,
  type ClearToolUsesEditParam,
  type CodeExecutionToolParam,
  type CompactEditParam,
  type ContextManagementParam,
  type ConversationRequest,
  type CountTokensRequest,
  type CustomToolParam,
  type Effort,
  type MessageParam,
  type MessageRequest,
  type SystemParam,
  type ThinkingParam,
  type ToolChoiceParam,
  type ToolParam,
  type ToolSearchToolParam,
  type UserLocation,
  type WebFetchToolParam,
  type WebSearchToolParam,
} from './request-schema.js';
export type { CompactionBlockParam, ContentBlockParam, ToolReferenceBlockParam } from './content-block-schema.js';
export { isWebFetchTool, isWebSearchTool } from './tool-types.js';
export { compactionPoint, endsOnCompaction, type CompactionPoint } from './compaction-point.js';
export { describeIssue, parseCountTokensRequest, parseMessageRequest } from './parse-request.js';
export { assertJsonTextBounds, type JsonBounds } from './json-bounds.js';
export { findSchemaProblem, type SchemaProblem } from './strict-schema.js';
export { checkConversationRules, checkMessageRules, isCustomTool, isPausedTurn } from './endpoint-rules.js';
export { callableFromCode } from './callable-from-code.js';
export { checkToolPairing } from './tool-pairing.js';
export { referencedNames, toolReferences, type ToolReference } from './tool-references.js';
export { usesTools } from './tool-use.js';
export {
  requestThinks,
  type MaxTokensPolicy,
  type ModelGeneration,
  type ModelProfile,
  type ModelTier,
} from './model-profile.js';
export type {
  AppliedEdit,
  CompactionBlock,
  ContentBlock,
  ContentBlockDelta,
  ContextManagementResponse,
  CountTokensResponse,
  Message,
  MessageDeltaUsage,
  ModelInfo,
  ServerToolResultBlock,
  ServerToolResultType,
  ServerToolUse,
  ServerToolUseBlock,
  StopReason,
  StreamErrorExtras,
  StreamEvent,
  TextBlock,
  ThinkingBlock,
  ToolUseBlock,
  Usage,
  UsageIteration,
} from './response.js';
export {
  compileSchema,
  compiledValidatorBytes,
  schemaViolation,
  type CompileOptions,
} from './json-schema-validator.js';
export { normalizeHost, parseDomainEntry, type DomainEntry } from './domain-entry.js';
export { compileSearchPattern, type SearchPattern } from './search-pattern.js';
export { SseParser, type SseFrame } from './sse-parser.js';
