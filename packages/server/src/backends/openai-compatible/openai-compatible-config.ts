/** The `openai-compatible` backend: a model served by an engine's OpenAI-style chat completions API. */
import { z } from 'zod';
import { admissionFields } from '../admission-options.js';
import type { WithPlacedDefaults } from '../backend-defaults.js';

export const ENGINE_KINDS = ['vllm', 'sglang', 'llama.cpp', 'ollama', 'generic'] as const;
export type EngineKind = (typeof ENGINE_KINDS)[number];
export const COUNT_TOKENS_MODES = ['engine', 'every-request', 'estimate'] as const;
export type CountTokensMode = (typeof COUNT_TOKENS_MODES)[number];
/** The syntaxes a call the model left in its text is read in (leaked-calls/, issue 35). */
export const TEXT_CALL_SYNTAX_NAMES = ['hermes', 'function-tag', 'llama-json', 'mistral', 'harmony'] as const;
export type TextCallSyntaxName = (typeof TEXT_CALL_SYNTAX_NAMES)[number];

const requestFields = z.record(z.string(), z.unknown());

export const openAiCompatibleBackendConfig = z
  .strictObject({
    type: z.literal('openai-compatible'),
    engine: z
      .enum(ENGINE_KINDS)
      .describe(
        'Which engine serves the model; decides the guided-decoding field, tokenizer endpoint and thinking switch (docs/backends.md).',
      ),
    baseURL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:8000/v1' })
      .describe(
        'The OpenAI-style base URL, usually ending in /v1: chat completions are POSTed to <baseURL>/chat/completions.',
      ),
    apiKey: z.string().min(1).optional().describe('Sent as Authorization: Bearer <apiKey>.'),
    apiKeyEnv: z
      .string()
      .min(1)
      .optional()
      .describe('Name of an environment variable holding the API key, instead of writing it in the file.'),
    model: z.string().min(1).describe("The engine's own model name (vLLM --served-model-name, an Ollama tag, ...)."),
    connectTimeoutMs: z.int().min(1).default(5_000).describe('Time to open a connection to the engine.'),
    firstByteTimeoutMs: z
      .int()
      .min(1)
      .optional()
      .describe(
        'Time from sending a request to the first streamed chunk (queueing and prefill included). Default 120000; 30000 for a backend with a fallback after it in a backends list.',
      ),
    idleTimeoutMs: z.int().min(1).default(60_000).describe('Longest silence between two streamed chunks.'),
    countTokens: z
      .enum(COUNT_TOKENS_MODES)
      .default('engine')
      .describe(
        "'engine' asks the engine's tokenizer endpoint where it has one for count_tokens and for a message request whose prompt may come near the context window; other message requests start with an estimate (message_start) and end with the engine's own count (message_delta). 'every-request' asks it before every message request too (one extra round trip each), so message_start is exact. 'estimate' counts 4 characters per token.",
      ),
    images: z
      .boolean()
      .default(true)
      .describe(
        "Whether the served model takes images (default true). false for a text-only model: an image, in a user turn or a tool's result, is then a 400 naming the block, before the engine is asked.",
      ),
    thinking: z
      .strictObject({ on: requestFields, off: requestFields })
      .optional()
      .describe(
        "Request fields that switch the model's thinking on and off; default per engine (chat_template_kwargs.enable_thinking, or Ollama's reasoning_effort).",
      ),
    textCallSyntaxes: z
      .array(z.enum(TEXT_CALL_SYNTAX_NAMES))
      .optional()
      .describe(
        "The syntaxes in which a tool call the model left in its text becomes a tool_use block (docs/backends.md): hermes (<tool_call>{...}), function-tag (Qwen3-Coder's <function=...><parameter=...>), llama-json (<|python_tag|> and bare JSON), mistral ([TOOL_CALLS]), harmony (gpt-oss to=functions.NAME). Default: all, each detected by its own markers; the served model's own syntax alone narrows what can be mistaken for a call; [] reads none.",
      ),
    maxTokensField: z
      .enum(['max_tokens', 'max_completion_tokens'])
      .optional()
      .describe(
        "Engine generic only: the request field that carries the output budget; default max_tokens. OpenAI's reasoning models take only max_completion_tokens.",
      ),
    streamOptions: z
      .boolean()
      .optional()
      .describe(
        'Engine generic only: send stream_options.include_usage (default true). false for a server that rejects the field; output tokens are then counted from the chunks unless the server sends usage anyway.',
      ),
    ...admissionFields,
  })
  // The named engines' fields are fixed by their own APIs (engine-profiles.ts): vLLM, SGLang and
  // llama.cpp read max_tokens, and Ollama's OpenAI layer ignored max_completion_tokens until
  // recently, which would silently drop the limit.
  .superRefine((config, context) => {
    if (config.engine === 'generic') return;
    for (const field of ['maxTokensField', 'streamOptions'] as const) {
      if (config[field] !== undefined)
        context.addIssue({
          code: 'custom',
          path: [field],
          message: `only for engine "generic"; the ${config.engine} engine's own fields are used`,
        });
    }
  });

export type OpenAiCompatibleBackendConfig = WithPlacedDefaults<z.infer<typeof openAiCompatibleBackendConfig>>;
