/** The `openai-compatible` kind (backend-kind.ts): an engine's OpenAI-style chat completions API. */
import { backendKind } from '../backend-kind.js';
import { DEFAULT_CONCURRENCY } from '../backend-defaults.js';
import { APPLIED_BY_THE_TURN_LOOP, ignored, refused, PROMPT_SENT, SENT } from '../call/call-fields.js';
import { ENGINE_PROFILES } from './engine-profiles.js';
import { OpenAiCompatibleBackend } from './openai-compatible-backend.js';
import { openAiCompatibleBackendConfig } from './openai-compatible-config.js';

const NO_SUCH_FIELD = 'a chat completions API has no such field, and it concerns the service, not the model';

export const openAiCompatibleKind = backendKind(openAiCompatibleBackendConfig, {
  create: (config, context) => new OpenAiCompatibleBackend(config, context),
  configStrings: { secrets: ['apiKey'], secretVariables: ['apiKeyEnv'], addresses: ['baseURL'] },
  // The engine itself, as the conventions name a provider; a generic server speaks OpenAI's API.
  telemetryName: (config) => (config.engine === 'generic' ? 'openai' : config.engine),
  admission: { defaultConcurrency: DEFAULT_CONCURRENCY, fallbackKeepsConcurrency: false },
  callFields: (config) => ({
    ...PROMPT_SENT,
    singleCall: SENT,
    'thinking.on': SENT,
    'thinking.budgetTokens': ignored('the engines switch thinking on or off; none takes a budget for it'),
    'thinking.requested': ignored('`thinking.on` says whether the model thinks; what was asked is for an upstream'),
    'thinking.effort': ignored('the engines switch thinking on or off; none takes an effort for it'),
    'thinking.display': APPLIED_BY_THE_TURN_LOOP.display,
    step: SENT,
    outputBudget: SENT,
    'sampling.temperature': SENT,
    'sampling.topP': SENT,
    'sampling.topK': ENGINE_PROFILES[config.engine].topK
      ? SENT
      : refused(`the ${config.engine} engine's chat completions API has no top_k (chat-request.ts)`),
    'sampling.stopSequences': SENT,
    streamed: ignored('every step streams from the engine; the route folds a JSON reply'),
    'passOn.metadata': ignored(NO_SUCH_FIELD),
    'passOn.serviceTier': ignored(NO_SUCH_FIELD),
    fault: ignored("fault injection is the scripted backend's"),
  }),
});
