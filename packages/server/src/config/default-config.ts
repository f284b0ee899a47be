/**
 * The config used when none is given: the three tiers on the embedded llama.cpp engine, each an
 * open Qwen3 instruct model that calls tools and thinks, with a switch to turn thinking off
 * (docs/decisions/0005-default-models.md says why these). Models download once, with a progress
 * bar, into ~/.cache/mms/models (MMS_MODELS_FOLDER); `mms pull` fetches them ahead of time.
 * Clients that pick their own model ids (Claude Code asks for `claude-...`) are routed by
 * pattern: a haiku to the small tier, any other claude to the large one.
 */
import type { ServiceConfigInput } from './config-schema.js';

const shared = { generation: 'newer', contextWindow: 16_384, maxOutputTokens: 8_192 } as const;

export const defaultConfig: ServiceConfigInput = {
  models: [
    {
      id: 'mms-small',
      aliases: ['small', 'claude-*haiku*'],
      tier: 'small',
      ...shared,
      backend: { type: 'llama-cpp', model: 'hf:Qwen/Qwen3-1.7B-GGUF:Q8_0' },
    },
    {
      id: 'mms-mid',
      aliases: ['mid'],
      tier: 'mid',
      ...shared,
      backend: { type: 'llama-cpp', model: 'hf:Qwen/Qwen3-4B-GGUF:Q4_K_M' },
    },
    {
      id: 'mms-large',
      aliases: ['large', 'claude-*'],
      tier: 'large',
      ...shared,
      backend: { type: 'llama-cpp', model: 'hf:Qwen/Qwen3-8B-GGUF:Q4_K_M' },
    },
  ],
};
