/**
 * Response shapes: the message, its content blocks and the stream events. The spec leaves
 * their fields "not shown"; they follow the public Messages API that real clients parse.
 */
import type { ErrorCode, ErrorEnvelope } from './errors.js';
import type { SERVER_TOOL_RESULT_TYPES } from './constants.js';

/** `compaction`: the reply stopped after its compaction block, as `pause_after_compaction` asks (issue 34). */
export type StopReason =
  'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'compaction';

export interface TextBlock {
  type: 'text';
  text: string;
  citations: null;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** Who called the tool; `direct` (the model) until programmatic tool calling exists. */
  caller: { type: 'direct' };
}

export interface ServerToolUseBlock {
  type: 'server_tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export type ServerToolResultType = (typeof SERVER_TOOL_RESULT_TYPES)[number];

export interface ServerToolResultBlock {
  type: ServerToolResultType;
  tool_use_id: string;
  content: unknown;
}

/**
 * The summary the request's model wrote of the conversation before it (context_management
 * `compact_20260112`, issue 34), signed by this service: a later request that carries it back
 * drops what came before it. `content` null: the compaction failed, and nothing was dropped.
 */
export interface CompactionBlock {
  type: 'compaction';
  content: string | null;
  /** Opaque to clients in the public API; this service keeps nothing there. */
  encrypted_content: null;
  /** `mms1c.<tag>` over the summary (server signing/compaction-signature.ts); null with no content. */
  signature: string | null;
}

export type ContentBlock =
  TextBlock | ThinkingBlock | ToolUseBlock | ServerToolUseBlock | ServerToolResultBlock | CompactionBlock;

/** `usage.server_tool_use`: the server tool calls of the turn that brought back a result. */
export interface ServerToolUse {
  web_search_requests: number;
  web_fetch_requests: number;
}

/**
 * One sampling of a turn, as `usage.iterations` lists them (issue 34): the compaction's own
 * call, then the message's. A compaction's tokens are not in the top-level usage, as the public
 * API counts them.
 */
export interface UsageIteration {
  type: 'compaction' | 'message';
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: null;
}

/**
 * Fields the official client types declare but this service has no value for are sent as null
 * rather than left out, so that client code testing `=== null` behaves.
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: null;
  server_tool_use: ServerToolUse | null;
  service_tier: 'standard';
  inference_geo: null;
  output_tokens_details: null;
  speed: null;
  /** Set when the turn compacted its conversation: the compaction's call and the message's. */
  iterations?: UsageIteration[];
}

/** What one context edit cleared (context_management.applied_edits, issue 34). */
export type AppliedEdit =
  | { type: 'clear_tool_uses_20250919'; cleared_tool_uses: number; cleared_input_tokens: number }
  | { type: 'clear_thinking_20251015'; cleared_thinking_turns: number; cleared_input_tokens: number };

/**
 * The edits applied before the prompt reached the model; present on replies to a request that
 * sent `context_management`. A compaction shows as its block and in `usage.iterations`.
 */
export interface ContextManagementResponse {
  applied_edits: AppliedEdit[];
}

export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  stop_details: null;
  container: null;
  diagnostics: null;
  usage: Usage;
  context_management?: ContextManagementResponse;
}

export type ContentBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'input_json_delta'; partial_json: string }
  /** A compaction block's summary, whole, in one delta, as the public stream sends it. */
  | { type: 'compaction_delta'; content: string | null; encrypted_content: null };

export type StreamEvent =
  | { type: 'message_start'; message: Message }
  | { type: 'content_block_start'; index: number; content_block: ContentBlock }
  | { type: 'content_block_delta'; index: number; delta: ContentBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: StopReason; stop_sequence: string | null; stop_details: null; container: null };
      usage: MessageDeltaUsage;
      context_management?: ContextManagementResponse;
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | ({ type: 'error' } & Omit<ErrorEnvelope, 'type'> & StreamErrorExtras);

/**
 * What this service adds to an `error` event: what its status reply's headers say (the code of
 * `mms-error-code`, the seconds of `retry-after`), since a stream's status and headers went out
 * before the failure (a stream opens at admission, docs/decisions/0015). Other services send
 * neither; clients that do not know them read the event as any other.
 */
export interface StreamErrorExtras {
  mms_error_code?: ErrorCode;
  mms_retry_after?: number;
}

/** Cumulative counts, as the public stream sends them in message_delta. */
export interface MessageDeltaUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  server_tool_use: Usage['server_tool_use'];
  output_tokens_details: null;
  iterations?: UsageIteration[];
}

export interface CountTokensResponse {
  input_tokens: number;
  /** For a request that sent `context_management`: the count before its edits. */
  context_management?: { original_input_tokens: number };
}

export interface ModelInfo {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
}
