/** The `messages-upstream` kind (backend-kind.ts): another service with this same Messages contract. */
import { backendKind } from '../backend-kind.js';
import { DEFAULT_CONCURRENCY } from '../backend-defaults.js';
import { ignored, PROMPT_SENT, SENT } from '../call/call-fields.js';
import { MessagesUpstreamBackend } from './messages-upstream-backend.js';
import { messagesUpstreamBackendConfig } from './messages-upstream-config.js';

export const messagesUpstreamKind = backendKind(messagesUpstreamBackendConfig, {
  create: (config, context) => new MessagesUpstreamBackend(config, context),
  configStrings: { secrets: ['apiKey'], secretVariables: ['apiKeyEnv'], addresses: ['baseURL'] },
  // The upstream speaks the Messages API, whose conventions' provider is its maker's.
  telemetryName: () => 'anthropic',
  admission: { defaultConcurrency: DEFAULT_CONCURRENCY, fallbackKeepsConcurrency: false },
  callFields: (config) => ({
    ...PROMPT_SENT,
    singleCall: SENT,
    'thinking.on': ignored('the upstream is given `thinking` as it was asked, and decides for itself'),
    'thinking.budgetTokens': SENT,
    'thinking.requested': SENT,
    'thinking.effort': SENT,
    'thinking.display': ignored(
      'the upstream is asked for the whole thinking, which the turn loop omits for the client, so that it survives in the signature (upstream-request.ts)',
    ),
    step: ignored('each step is a request of its own to the upstream, which answers one step'),
    outputBudget: SENT,
    'sampling.temperature': SENT,
    'sampling.topP': SENT,
    'sampling.topK': SENT,
    'sampling.stopSequences': SENT,
    streamed: ignored('every step streams from the upstream; the route folds a JSON reply'),
    'passOn.metadata': SENT,
    'passOn.serviceTier': SENT,
    fault: config.forwardFaults ? SENT : ignored('the config leaves `forwardFaults` off'),
  }),
});
