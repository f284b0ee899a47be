import { z } from 'zod';
import type { WithPlacedDefaults } from '../backend-defaults.js';
import { CHAT_WRAPPER_NAMES } from './chat-wrapper-names.js';

export const llamaCppBackendConfig = z.strictObject({
  type: z.literal('llama-cpp'),
  model: z
    .string()
    .min(1)
    .describe(
      'A GGUF file path (relative to the config file) or a Hugging Face URI such as hf:<user>/<repo>/<file>.gguf.',
    ),
  modelsFolder: z
    .string()
    .min(1)
    .optional()
    .describe('Where hf: models are downloaded and cached; default ~/.cache/mms/models (env MMS_MODELS_FOLDER).'),
  threads: z
    .int()
    .min(1)
    .optional()
    .describe('CPU threads for generation; default: what llama.cpp picks. Tiny models run fastest on 1.'),
  contextSize: z
    .int()
    .min(64)
    .optional()
    .describe(
      'Tokens per sequence; default: the model entry contextWindow. Each sequence gets the whole size: the KV cache holds contextSize x sequences tokens.',
    ),
  concurrency: z
    .int()
    .min(1)
    .optional()
    .describe(
      'Requests generating at once; each gets its own context sequence, and requests generating together share decode batches (on a CPU, a quantized model gains from groups of 4). Default 1. As a fallback in a backends list: its own sequences (default 1), while the first backend admits the list; a request it has no free sequence for moves on with a 529.',
    ),
  sequences: z
    .int()
    .min(1)
    .optional()
    .describe(
      'Context sequences, each keeping the prompt it last evaluated for reuse by a later request that starts the same way; default (and at least) concurrency. More than concurrency keeps more conversations warm, at contextSize tokens of KV cache each, but requests decode in one batch only on consecutive sequences.',
    ),
  reusePrefix: z
    .boolean()
    .default(true)
    .describe(
      'Evaluate only the part of a prompt that the chosen sequence does not hold already, or that another sequence holds (copied from it); reported as cache_read_input_tokens. false: every prompt is evaluated whole, as on a cold start.',
    ),
  queue: z
    .int()
    .min(0)
    .optional()
    .describe(
      'Requests waiting for a sequence; past it: 529 overloaded_error at once. Default 64; in a backends list only the first backend sets it.',
    ),
  thinkingShare: z
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe('Largest share of max_tokens that thinking may use, so an answer always has room.'),
  chatWrapper: z
    .enum(['auto', ...CHAT_WRAPPER_NAMES])
    .default('auto')
    .describe(
      "The chat format: 'auto' reads the model's own template; a name forces node-llama-cpp's wrapper for that family.",
    ),
  seed: z
    .int()
    .min(0)
    .optional()
    .describe('Sampling seed for every request, for reproducible output; default: a fresh random seed per request.'),
  gpu: z
    .enum(['auto', 'cuda', 'vulkan', 'metal', 'none'])
    .default('none')
    .describe('GPU backend; the slim install ships CPU binaries only (see README).'),
});

export type LlamaCppBackendConfig = WithPlacedDefaults<z.infer<typeof llamaCppBackendConfig>>;
