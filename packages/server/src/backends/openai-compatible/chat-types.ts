/**
 * The OpenAI chat completions wire as the engines speak it: the standard fields plus the
 * extensions this backend sends or reads (named where they come from).
 */

export type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string; tool_calls?: ChatToolCall[]; reasoning_content?: string; reasoning?: string }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  stream: true;
  /** Left out for a generic server that rejects it (`streamOptions: false`). */
  stream_options?: { include_usage: true };
  /** One of these two carries the output budget (`maxTokensField`). */
  max_tokens?: number;
  /** OpenAI's newer name, the only one its reasoning models take. */
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  /** vLLM, SGLang, llama.cpp extension. */
  top_k?: number;
  stop?: string[];
  tools?: ChatFunctionTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: {
    type: 'json_schema';
    json_schema: { name: string; schema: Record<string, unknown>; strict: true };
  };
  /** llama.cpp server extension. */
  json_schema?: Record<string, unknown>;
  /** vLLM and SGLang: continue the final assistant message (a prefill). */
  continue_final_message?: boolean;
  add_generation_prompt?: boolean;
  /** Thinking switch fields from the engine profile or the config (chat_template_kwargs, reasoning_effort). */
  [extension: string]: unknown;
}

export interface ChatToolCallDelta {
  index?: number;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

export interface ChatDelta {
  role?: string | null;
  content?: string | null;
  /** vLLM before 0.11, SGLang, llama.cpp. */
  reasoning_content?: string | null;
  /** vLLM from 0.11, Ollama. */
  reasoning?: string | null;
  tool_calls?: ChatToolCallDelta[] | null;
}

export interface ChatChoice {
  index?: number;
  delta?: ChatDelta;
  /** A whole `chat.completion` (a server that answered without streaming). */
  message?: ChatDelta;
  finish_reason?: string | null;
  /** vLLM: the stop string (or token id) that ended generation. */
  stop_reason?: string | number | null;
  /** SGLang: the same. */
  matched_stop?: string | number | null;
}

export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  /** vLLM, SGLang and llama.cpp server: the prompt's tokens served from the engine's prefix cache. */
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}

export interface ChatCompletionChunk {
  choices?: ChatChoice[];
  usage?: ChatUsage | null;
  /** An error sent inside a stream (vLLM, llama.cpp). */
  error?: unknown;
  object?: string;
  message?: unknown;
}
