import { z } from 'zod';
import { admissionFields } from '../admission-options.js';
import type { WithPlacedDefaults } from '../backend-defaults.js';

export const scriptedBackendConfig = z.strictObject({
  type: z.literal('scripted'),
  script: z.string().min(1).optional().describe('Path of a script JSON file, relative to the config file.'),
  faults: z.boolean().default(false).describe('Let the request header mms-fault inject failures.'),
  tokenDelayMs: z
    .number()
    .min(0)
    .max(60_000)
    .default(0)
    .describe('Delay before each output token, to simulate a model.'),
  thinkingShare: z.number().min(0).max(1).default(0.5).describe('Largest share of max_tokens that thinking may use.'),
  ...admissionFields,
});

export type ScriptedBackendConfig = WithPlacedDefaults<z.infer<typeof scriptedBackendConfig>>;
