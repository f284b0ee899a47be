/** The `backend` field of a model in the config: one entry per engine kind. */
import { z } from 'zod';
import { llamaCppBackendConfig } from './llama-cpp/llama-cpp-config.js';
import { scriptedBackendConfig } from './scripted/scripted-config.js';

export const backendConfig = z.discriminatedUnion('type', [scriptedBackendConfig, llamaCppBackendConfig]);

export type BackendConfig = z.infer<typeof backendConfig>;
