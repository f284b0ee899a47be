/** The `openai-compatible` backend: a model served by an engine's OpenAI-style chat completions API. */
import { z } from 'zod';
import { admissionFields } from '../admission-options.js';
import type { WithPlacedDefaults } from '../backend-defaults.js';

export const ENGINE_KINDS = ['vllm', 'sglang', 'llama.cpp', 'ollama', 'generic'] as const;
export type EngineKind = (typeof ENGINE_KINDS)[number];

const requestFields = z.record(z.string(), z.unknown());

export const openAiCompatibleBackendConfig = z.strictObject({
  type: z.literal('openai-compatible'),
  engine: z.enum(ENGINE_KINDS).describe('Which engine serves the model; decides the guided-decoding field, tokenizer endpoint and thinking switch (docs/backends.md).'),
  baseURL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:8000/v1' })
    .describe('The OpenAI-style base URL, usually ending in /v1: chat completions are POSTed to <baseURL>/chat/completions.'),
  apiKey: z.string().min(1).optional().describe('Sent as Authorization: Bearer <apiKey>.'),
  apiKeyEnv: z.string().min(1).optional().describe('Name of an environment variable holding the API key, instead of writing it in the file.'),
  model: z.string().min(1).describe("The engine's own model name (vLLM --served-model-name, an Ollama tag, ...)."),
  connectTimeoutMs: z.int().min(1).default(5_000).describe('Time to open a connection to the engine.'),
  firstByteTimeoutMs: z
    .int()
    .min(1)
    .optional()
    .describe('Time from sending a request to the first streamed chunk (queueing and prefill included). Default 120000; 30000 for a backend with a fallback after it in a backends list.'),
  idleTimeoutMs: z.int().min(1).default(60_000).describe('Longest silence between two streamed chunks.'),
  countTokens: z
    .enum(['engine', 'estimate'])
    .default('engine')
    .describe("'engine' asks the engine's tokenizer endpoint where it has one (one extra round trip per request); 'estimate' counts 4 characters per token."),
  thinking: z
    .strictObject({ on: requestFields, off: requestFields })
    .optional()
    .describe('Request fields that switch the model\'s thinking on and off; default per engine (chat_template_kwargs.enable_thinking, or Ollama\'s reasoning_effort).'),
  ...admissionFields,
});

export type OpenAiCompatibleBackendConfig = WithPlacedDefaults<z.infer<typeof openAiCompatibleBackendConfig>>;
