/**
 * The one description of a model call that every backend receives (docs/architecture.md, "The
 * model call"): the conversation as the model sees it, the table of tools it is offered, what its
 * output must be, and the sampling settings. Built once per step from the validated request by
 * call-builder/build-model-call.ts; a backend only maps it to its engine's format and never reads
 * the wire request, so no decision about what the model is told is made twice. The builder lives
 * outside backends/ (issue 33): a backend imports these types, never the builder.
 */
import type { Effort, ModelProfile } from '@model-messages/protocol';

/** A `cache_control` breakpoint of the request: a hint of where a reusable prefix ends. */
export interface CacheHint {
  ttl: '5m' | '1h' | undefined;
}

export interface TextPart {
  type: 'text';
  text: string;
  cache?: CacheHint;
}

export interface ImagePart {
  type: 'image';
  source: { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string };
  /** Where the block stands in the request (`messages.2.content.0`), for an engine that must refuse it. */
  where: string;
  cache?: CacheHint;
}

export interface DocumentPart {
  type: 'document';
  source: { kind: 'text'; text: string } | { kind: 'pdf'; data: string } | { kind: 'url'; url: string };
  title: string | undefined;
  context: string | undefined;
  /** The caller asked for citations into it (`citations.enabled`). */
  citations: boolean;
  where: string;
  cache?: CacheHint;
}

export interface ThinkingPart {
  type: 'thinking';
  text: string;
  signature: string;
}

export interface RedactedThinkingPart {
  type: 'redacted-thinking';
  data: string;
}

/** A call the model made: of a client tool (`tool_use`) or of a server tool (`server_tool_use`). */
export interface ToolCallPart {
  type: 'tool-call';
  id: string;
  name: string;
  input: Record<string, unknown>;
  server: boolean;
  cache?: CacheHint;
}

/**
 * What a tool gave back. A client tool's result arrives in a user turn; a server tool's result
 * stands in the assistant turn, after its call, and its content is already the text the model
 * reads (tool-kinds/server-results.ts), never the wire block.
 */
export interface ToolResultPart {
  type: 'tool-result';
  callId: string;
  content: Array<TextPart | ImagePart | DocumentPart>;
  isError: boolean;
  server: boolean;
  cache?: CacheHint;
}

export type UserPart = TextPart | ImagePart | DocumentPart | ToolResultPart;
export type AssistantPart = TextPart | ThinkingPart | RedactedThinkingPart | ToolCallPart | ToolResultPart;

/**
 * Turns alternate: two turns of one role in a row are joined into one when the call is built. An
 * engine that takes a turn's text as one string joins its text parts with a blank line, so that
 * what were separate blocks or messages stay apart. A `system` turn is a caller's instruction at
 * its place in the conversation (a `role: "system"` message); it never stands between a turn's
 * tool calls and their results (call-builder/conversation.ts).
 */
export type Turn =
  | { role: 'user'; parts: UserPart[] }
  | { role: 'assistant'; parts: AssistantPart[] }
  | { role: 'system'; parts: TextPart[] };

/** One tool as the model is told of it: a client's custom tool or a server tool run by this service. */
export interface OfferedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Input must match `inputSchema` (a strict custom tool). */
  strict: boolean;
  /** A server tool: the model's call of it becomes a `server_tool_use` block, run by the turn loop. */
  server: boolean;
  /** Where its schema stands in the request, for errors: `tools.0.input_schema`, or `tools.1` for a server tool. */
  where: string;
  cache?: CacheHint;
}

/** `output_config.format`: the model's text answer must be one JSON value matching `schema`. */
export interface FormatTarget {
  schema: Record<string, unknown>;
  where: string;
}

/** What the model's output must be. */
export type OutputTarget =
  /** An answer in text (JSON for `format`); the model may call any offered tool unless `toolsAllowed` is false. */
  | { kind: 'answer'; format: FormatTarget | undefined; toolsAllowed: boolean }
  /** A call of this one tool (tool_choice `tool`, or `any` with one tool offered). */
  | { kind: 'tool'; tool: OfferedTool }
  /** A call of any one of the offered tools (tool_choice `any` with several). */
  | { kind: 'any-tool' };

export interface ThinkingSetting {
  /** Whether the model thinks on this call (protocol's requestThinks, decided once). */
  on: boolean;
  /** `budget_tokens` of thinking `enabled`. */
  budgetTokens: number | undefined;
  /** The request's `thinking.type` as sent, which a Messages upstream is given again. */
  requested: 'adaptive' | 'enabled' | 'disabled' | undefined;
  /** `output_config.effort`: how much of the budget thinking may take (thinking-budget.ts). */
  effort: Effort | undefined;
  /** `thinking.display` as sent, which a Messages upstream is given again (the turn loop applies it). */
  display: 'summarized' | 'omitted' | undefined;
}

/** Everything that decides the prompt, and so its token count. */
export interface ModelPrompt {
  model: ModelProfile;
  /** The caller's system prompt, block by block; empty when there is none. */
  system: TextPart[];
  turns: Turn[];
  /** Every tool the request offers, in its order. */
  tools: OfferedTool[];
  output: OutputTarget;
  /** At most one tool call per step (`disable_parallel_tool_use`). */
  singleCall: boolean;
  thinking: ThinkingSetting;
}

export interface Sampling {
  temperature: number | undefined;
  topP: number | undefined;
  topK: number | undefined;
  stopSequences: string[];
}

/** One step of a turn: the prompt, and how much and how to generate. */
export interface ModelCall extends ModelPrompt {
  /** Index of this step within the request's turn loop, from 0. */
  step: number;
  /**
   * Output tokens this step may spend: max_tokens less what earlier steps spent. At least 1: with
   * nothing left the turn loop ends the turn on max_tokens without asking for a step.
   */
  outputBudget: number;
  sampling: Sampling;
  /** The caller reads the reply as it streams (a scripted reply is paced per token only then). */
  streamed: boolean;
  /** Request settings that concern the service, not the model: a Messages upstream is given them as they were. */
  passOn: { metadata: { user_id?: string | null } | undefined; serviceTier: 'auto' | 'standard_only' | undefined };
  /** The `mms-fault` header; only a backend configured for fault injection reads it. */
  fault: string | undefined;
}
