/**
 * Builds the engine a model's config names, through its kind (backend-kinds.ts): no kind is named
 * here (issue 33). The kind's telemetry name for the config goes to the backend with the rest of
 * what the service hands it.
 */
import type { Backend } from './backend.js';
import type { BackendConfig } from './backend-config.js';
import type { BackendContext } from './backend-kind.js';
import { backendKindOf } from './backend-kinds.js';

export function createBackend(config: BackendConfig, context: Omit<BackendContext, 'telemetryName'>): Backend {
  const kind = backendKindOf(config);
  return kind.create(config, { ...context, telemetryName: kind.telemetryName(config) });
}
