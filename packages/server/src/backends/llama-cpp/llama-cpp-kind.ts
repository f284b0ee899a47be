/** The `llama-cpp` kind (backend-kind.ts): a GGUF model run in this process by node-llama-cpp. */
import { backendKind } from '../backend-kind.js';
import { APPLIED_BY_THE_TURN_LOOP, ignored, PROMPT_SENT, SENT } from '../call/call-fields.js';
import { LlamaCppBackend } from './llama-cpp-backend.js';
import { llamaCppBackendConfig } from './llama-cpp-config.js';

export const llamaCppKind = backendKind(llamaCppBackendConfig, {
  create: (config, context) => new LlamaCppBackend(config, context),
  // A model file's path or Hugging Face URI is neither a secret nor an address it serves from.
  configStrings: { secrets: [], secretVariables: [], addresses: [] },
  telemetryName: () => 'llama.cpp',
  // Its concurrency is its context sequences, each a full context of memory: one by default,
  // and a fallback keeps its own rather than the list's 16 or 64 (backend-defaults.ts).
  admission: { defaultConcurrency: 1, fallbackKeepsConcurrency: true },
  callFields: () => ({
    ...PROMPT_SENT,
    singleCall: SENT,
    'thinking.on': SENT,
    'thinking.budgetTokens': SENT,
    'thinking.requested': ignored('`thinking.on` says whether the model thinks; what was asked is for an upstream'),
    'thinking.effort': SENT,
    'thinking.display': APPLIED_BY_THE_TURN_LOOP.display,
    step: SENT,
    outputBudget: SENT,
    'sampling.temperature': SENT,
    'sampling.topP': SENT,
    'sampling.topK': SENT,
    'sampling.stopSequences': SENT,
    streamed: SENT,
    'passOn.metadata': ignored('it concerns the service, not the model'),
    'passOn.serviceTier': ignored('it concerns the service, not the model'),
    fault: ignored("fault injection is the scripted backend's"),
  }),
});
