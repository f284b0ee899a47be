/** The `messages-upstream` backend: another service with this same Messages contract (another mms, say). */
import { z } from 'zod';
import { admissionFields } from '../admission-options.js';
import type { WithPlacedDefaults } from '../backend-defaults.js';

export const messagesUpstreamBackendConfig = z
  .strictObject({
    type: z.literal('messages-upstream'),
    baseURL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://10.0.0.7:8080' })
      .describe('The upstream service: requests go to <baseURL>/v1/messages and <baseURL>/v1/messages/count_tokens.'),
    apiKey: z.string().min(1).optional().describe("Sent as x-api-key: the upstream's key, not one of this service's."),
    apiKeyEnv: z
      .string()
      .min(1)
      .optional()
      .describe('Name of an environment variable holding the API key, instead of writing it in the file.'),
    model: z.string().min(1).optional().describe("The model id to ask the upstream for; default: this model's id."),
    connectTimeoutMs: z.int().min(1).default(5_000).describe('Time to open a connection to the upstream.'),
    firstByteTimeoutMs: z
      .int()
      .min(1)
      .optional()
      .describe(
        "Time from sending a request to the upstream's first output (its queueing and prefill included). Default 120000; 30000 for a backend with a fallback after it in a backends list.",
      ),
    idleTimeoutMs: z
      .int()
      .min(1)
      .default(60_000)
      .describe("Longest silence between two chunks of the upstream's stream (an mms upstream pings every 10 s)."),
    forwardFaults: z
      .boolean()
      .default(false)
      .describe("Pass the request's mms-fault header on to the upstream, to test a chain of services; off by default."),
    ...admissionFields,
  })
  .refine((config) => config.apiKey === undefined || config.apiKeyEnv === undefined, {
    message: 'give apiKey or apiKeyEnv, not both',
    path: ['apiKeyEnv'],
  });

export type MessagesUpstreamBackendConfig = WithPlacedDefaults<z.infer<typeof messagesUpstreamBackendConfig>>;
