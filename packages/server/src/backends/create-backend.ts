import { resolve } from 'node:path';
import type { Backend } from './backend.js';
import type { BackendConfig } from './backend-config.js';
import { ScriptedBackend } from './scripted/scripted-backend.js';

/** Builds the engine a model's config names. Relative paths resolve against `configFolder`. */
export function createBackend(config: BackendConfig, configFolder: string): Backend {
  switch (config.type) {
    case 'scripted':
      return new ScriptedBackend(config, config.script === undefined ? undefined : resolve(configFolder, config.script));
    default:
      return config.type satisfies never;
  }
}
