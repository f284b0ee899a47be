/** The `backend` field of a model in the config: one entry per engine kind. */
import { z } from 'zod';
import type { WithPlacedDefaults } from './backend-defaults.js';
import { llamaCppBackendConfig } from './llama-cpp/llama-cpp-config.js';
import { messagesUpstreamBackendConfig } from './messages-upstream/messages-upstream-config.js';
import { openAiCompatibleBackendConfig } from './openai-compatible/openai-compatible-config.js';
import { scriptedBackendConfig } from './scripted/scripted-config.js';

export const backendConfig = z.discriminatedUnion('type', [
  scriptedBackendConfig,
  llamaCppBackendConfig,
  messagesUpstreamBackendConfig,
  openAiCompatibleBackendConfig,
]);

/** As written in the file: the defaults that depend on the backend's place are still unset. */
export type BackendConfigInput = z.infer<typeof backendConfig>;
/** With those defaults applied (backend-defaults.ts): what a backend is built from. */
export type BackendConfig = WithPlacedDefaults<BackendConfigInput>;
