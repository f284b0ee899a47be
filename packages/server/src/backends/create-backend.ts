import { resolve } from 'node:path';
import type { ModelProfile } from '@model-messages/protocol';
import type { Backend } from './backend.js';
import type { BackendConfig } from './backend-config.js';
import { LlamaCppBackend, type LoadMode } from './llama-cpp/llama-cpp-backend.js';
import { MessagesUpstreamBackend } from './messages-upstream/messages-upstream-backend.js';
import {
  OpenAiCompatibleBackend,
  type OpenAiCompatibleOptions,
} from './openai-compatible/openai-compatible-backend.js';
import { ScriptedBackend } from './scripted/scripted-backend.js';

/**
 * What the service hands every backend besides its config: where warnings and events go, the
 * clock, how error replies name the backend (`modelLabel`: by its model, never its address), and
 * when its model loads (the model's `load`, default eager).
 */
export type BackendOptions = OpenAiCompatibleOptions & { load?: LoadMode };

/** Builds the engine a model's config names. Relative paths resolve against `configFolder`. */
export function createBackend(
  config: BackendConfig,
  configFolder: string,
  profile: ModelProfile,
  options: BackendOptions = {},
): Backend {
  switch (config.type) {
    case 'scripted':
      return new ScriptedBackend(
        config,
        config.script === undefined ? undefined : resolve(configFolder, config.script),
      );
    case 'llama-cpp':
      return new LlamaCppBackend(config, configFolder, profile, options.load, options.report);
    case 'messages-upstream':
      return new MessagesUpstreamBackend(config, profile, options.modelLabel, options.now);
    case 'openai-compatible':
      return new OpenAiCompatibleBackend(config, options);
    default:
      return config satisfies never;
  }
}
