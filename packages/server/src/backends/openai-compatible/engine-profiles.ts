/**
 * What each engine's chat completions API understands, looked up in its own documentation and
 * source (docs/backends.md has the same table with the sources). Everything engine-specific in
 * this folder reads from here, so adding an engine is one entry.
 *
 * | engine    | forced tool (tool_choice tool)                     | tool_choice any     | output_config.format           | strict tools, auto       | stop sequence reported | tokenizer                     |
 * |-----------|----------------------------------------------------|---------------------|--------------------------------|--------------------------|------------------------|-------------------------------|
 * | vllm      | tool_choice {type: function} (structured outputs)  | "required" (guided) | response_format json_schema    | `strict: true` + check   | choice.stop_reason     | POST /tokenize {messages}     |
 * | sglang    | tool_choice {type: function} (grammar constrained) | "required" (guided) | response_format json_schema    | check, repair            | choice.matched_stop    | POST /tokenize {prompt} (approx.) |
 * | llama.cpp | json_schema of the tool's input (grammar)          | "required"          | json_schema (top-level field)  | check, repair            | matched in mms         | /apply-template + /tokenize   |
 * | ollama    | response_format json_schema (its `format`)         | same, one schema    | response_format json_schema    | check, repair            | matched in mms         | estimate                      |
 * | generic   | tool_choice {type: function}, checked, retried     | "required", checked | none: instruction, check, retry | check, repair           | matched in mms         | estimate                      |
 *
 * Why these fields:
 * - vLLM: `response_format` json_schema rather than `structured_outputs.json`: vLLM removed
 *   `guided_json` in 0.12 and added `structured_outputs` in 0.10, and it ignores unknown fields
 *   with only a log line, so a version mismatch would silently drop the constraint;
 *   `response_format` has meant the same thing in every version since 0.6.
 * - llama.cpp: the top-level `json_schema` field rather than `response_format`: its
 *   `response_format` parsing differed between builds (a shadowed variable, llama.cpp #12168),
 *   while `json_schema` has always been read. Its `tool_choice` took only strings until
 *   recently (an object fell back to "auto" with a warning), so a named tool is forced by
 *   schema, with no tools sent (tools and json_schema cannot be combined there).
 * - Ollama: its OpenAI layer reads `response_format.json_schema.schema` into its own `format`
 *   and ignores `tool_choice`, `parallel_tool_calls` and `top_k` (openai/openai.go).
 * - generic: an unknown server may reject or ignore any extension, so only standard fields go.
 */
import type { EngineKind } from './openai-compatible-config.js';

/** An engine's own tokenizer endpoint (token-counting.ts); `estimate`: it has none. */
export type EngineTokenizer = 'vllm' | 'sglang' | 'llama.cpp';

export interface EngineProfile {
  /** A named tool forced through `tool_choice: {type: "function", ...}`. */
  namedToolChoice: boolean;
  /** `tool_choice: "required"` and `"none"` are understood. */
  toolChoiceModes: boolean;
  /** Whether the engine itself holds a named or required call to its schema. */
  forcedCallsGuided: boolean;
  /** The field that carries a JSON Schema for guided decoding; undefined: none. */
  guidedField: 'response_format' | 'json_schema' | undefined;
  /** `strict: true` on a function makes the engine constrain its arguments (vLLM structural tags). */
  sendsStrict: boolean;
  topK: boolean;
  /** Where the matched stop string is reported; undefined: mms matches stop sequences itself. */
  stopReport: 'stop_reason' | 'matched_stop' | undefined;
  /** The assistant-message field that carries earlier reasoning back; undefined: not sent. */
  reasoningHistoryField: 'reasoning_content' | 'reasoning' | undefined;
  /** `continue_final_message` continues an assistant prefill. */
  continueFinalMessage: boolean;
  thinkingSwitch: { on: Record<string, unknown>; off: Record<string, unknown> };
  tokenizer: EngineTokenizer | 'estimate';
  /**
   * `usage.prompt_tokens` counts the whole prompt, cached tokens included, so it can stand as
   * the reply's input tokens. vLLM (`len(prompt_token_ids)`), SGLang (`len(input_ids)`) and
   * llama.cpp server (`slot.task->n_tokens()`) do, with cache hits apart in
   * `prompt_tokens_details.cached_tokens`. Ollama's is `prompt_eval_count`: only the tokens it
   * evaluated, so 0 or a few on a follow-up turn that hit its cache. Generic: the OpenAI API's
   * own meaning is the whole prompt, so it is taken; a server behind a proxy that counts like
   * Ollama should be configured as `ollama`.
   */
  wholePromptUsage: boolean;
}

const templateSwitch = {
  on: { chat_template_kwargs: { enable_thinking: true } },
  off: { chat_template_kwargs: { enable_thinking: false } },
};

export const ENGINE_PROFILES: Record<EngineKind, EngineProfile> = {
  vllm: {
    namedToolChoice: true,
    toolChoiceModes: true,
    forcedCallsGuided: true,
    guidedField: 'response_format',
    sendsStrict: true,
    topK: true,
    stopReport: 'stop_reason',
    reasoningHistoryField: 'reasoning_content',
    continueFinalMessage: true,
    thinkingSwitch: templateSwitch,
    tokenizer: 'vllm',
    wholePromptUsage: true,
  },
  sglang: {
    namedToolChoice: true,
    toolChoiceModes: true,
    forcedCallsGuided: true,
    guidedField: 'response_format',
    sendsStrict: false,
    topK: true,
    stopReport: 'matched_stop',
    reasoningHistoryField: 'reasoning_content',
    continueFinalMessage: true,
    thinkingSwitch: templateSwitch,
    tokenizer: 'sglang',
    wholePromptUsage: true,
  },
  'llama.cpp': {
    namedToolChoice: false,
    toolChoiceModes: true,
    forcedCallsGuided: false,
    guidedField: 'json_schema',
    sendsStrict: false,
    topK: true,
    stopReport: undefined,
    reasoningHistoryField: 'reasoning_content',
    continueFinalMessage: false,
    thinkingSwitch: templateSwitch,
    tokenizer: 'llama.cpp',
    wholePromptUsage: true,
  },
  ollama: {
    namedToolChoice: false,
    toolChoiceModes: false,
    forcedCallsGuided: false,
    guidedField: 'response_format',
    sendsStrict: false,
    topK: false,
    stopReport: undefined,
    reasoningHistoryField: 'reasoning',
    continueFinalMessage: false,
    // Ollama maps reasoning_effort "none" to think=false; asking a model without thinking to
    // think is an error there, so "on" leaves the model's default.
    thinkingSwitch: { on: {}, off: { reasoning_effort: 'none' } },
    tokenizer: 'estimate',
    wholePromptUsage: false,
  },
  generic: {
    namedToolChoice: true,
    toolChoiceModes: true,
    forcedCallsGuided: false,
    guidedField: undefined,
    sendsStrict: false,
    topK: false,
    stopReport: undefined,
    reasoningHistoryField: undefined,
    continueFinalMessage: false,
    thinkingSwitch: { on: {}, off: {} },
    tokenizer: 'estimate',
    wholePromptUsage: true,
  },
};
