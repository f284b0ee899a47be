import { resolve } from 'node:path';
import type { ModelProfile } from '@mms/protocol';
import type { Backend } from './backend.js';
import type { BackendConfig } from './backend-config.js';
import { LlamaCppBackend } from './llama-cpp/llama-cpp-backend.js';
import { ScriptedBackend } from './scripted/scripted-backend.js';

/** Builds the engine a model's config names. Relative paths resolve against `configFolder`. */
export function createBackend(config: BackendConfig, configFolder: string, profile: ModelProfile): Backend {
  switch (config.type) {
    case 'scripted':
      return new ScriptedBackend(config, config.script === undefined ? undefined : resolve(configFolder, config.script));
    case 'llama-cpp':
      return new LlamaCppBackend(config, configFolder, profile);
    default:
      return config satisfies never;
  }
}
