/**
 * The config used when none is given. Until the embedded llama.cpp engine lands (issue 3) the
 * three tiers run on the scripted backend, so `mms serve` answers at once with no model files.
 */
import type { ServiceConfigInput } from './config-schema.js';

export const defaultConfig: ServiceConfigInput = {
  models: [
    { id: 'mms-small', aliases: ['small'], tier: 'small', generation: 'newer', contextWindow: 32_768, maxOutputTokens: 64_000, backend: { type: 'scripted' } },
    { id: 'mms-mid', aliases: ['mid'], tier: 'mid', generation: 'newer', contextWindow: 1_000_000, maxOutputTokens: 64_000, backend: { type: 'scripted' } },
    { id: 'mms-large', aliases: ['large'], tier: 'large', generation: 'newer', contextWindow: 200_000, maxOutputTokens: 128_000, backend: { type: 'scripted' } },
  ],
};
