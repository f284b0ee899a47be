/** The `scripted` kind (backend-kind.ts): a deterministic stand-in for a model, for tests. */
import { resolve } from 'node:path';
import { backendKind } from '../backend-kind.js';
import { DEFAULT_CONCURRENCY } from '../backend-defaults.js';
import { APPLIED_BY_THE_TURN_LOOP, ignored, PROMPT_SENT, SENT } from '../call/call-fields.js';
import { ScriptedBackend } from './scripted-backend.js';
import { scriptedBackendConfig } from './scripted-config.js';

const NO_MODEL = 'no model samples here: the answers are the same every time';

export const scriptedKind = backendKind(scriptedBackendConfig, {
  create: (config, context) =>
    new ScriptedBackend(
      config,
      config.script === undefined ? undefined : resolve(context.configFolder, config.script),
      context.telemetryName,
    ),
  configStrings: { secrets: [], secretVariables: [], addresses: [] },
  telemetryName: () => 'mms.scripted',
  admission: { defaultConcurrency: DEFAULT_CONCURRENCY, fallbackKeepsConcurrency: false },
  callFields: (config) => ({
    ...PROMPT_SENT,
    singleCall: APPLIED_BY_THE_TURN_LOOP.singleCall,
    'thinking.on': SENT,
    'thinking.budgetTokens': SENT,
    'thinking.requested': ignored('`thinking.on` says whether the model thinks; what was asked is for an upstream'),
    'thinking.effort': SENT,
    'thinking.display': APPLIED_BY_THE_TURN_LOOP.display,
    step: ignored("the script counts a turn's steps from its server results (conversation-text.ts)"),
    outputBudget: SENT,
    'sampling.temperature': ignored(NO_MODEL),
    'sampling.topP': ignored(NO_MODEL),
    'sampling.topK': ignored(NO_MODEL),
    'sampling.stopSequences': SENT,
    streamed: SENT,
    'passOn.metadata': ignored('it concerns the service, not the model'),
    'passOn.serviceTier': ignored('it concerns the service, not the model'),
    fault: config.faults ? SENT : ignored('the config leaves `faults` off'),
  }),
});
