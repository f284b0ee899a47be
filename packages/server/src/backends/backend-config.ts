/** The `backend` field of a model in the config: one entry per engine kind. */
import { z } from 'zod';
import { llamaCppBackendConfig } from './llama-cpp/llama-cpp-config.js';
import { messagesUpstreamBackendConfig } from './messages-upstream/messages-upstream-config.js';
import { openAiCompatibleBackendConfig } from './openai-compatible/openai-compatible-config.js';
import { scriptedBackendConfig } from './scripted/scripted-config.js';

export const backendConfig = z.discriminatedUnion('type', [scriptedBackendConfig, llamaCppBackendConfig, messagesUpstreamBackendConfig, openAiCompatibleBackendConfig]);

export type BackendConfig = z.infer<typeof backendConfig>;
