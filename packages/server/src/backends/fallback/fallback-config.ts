/** The `fallback` field of a model with `backends: [...]`: its circuit breakers' settings. */
import { z } from 'zod';

export const fallbackConfig = z.strictObject({
  failureThreshold: z
    .int()
    .min(1)
    .default(3)
    .describe(
      "Retryable failures in a row (500, 529, 429, connection errors, timeouts) that open a backend's circuit.",
    ),
  cooldownMs: z
    .int()
    .min(1)
    .default(30_000)
    .describe('How long an open circuit skips its backend before one request probes it again.'),
});

export type FallbackConfig = z.infer<typeof fallbackConfig>;
