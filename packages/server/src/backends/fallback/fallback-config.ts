/**
 * The `fallback` field of a model with `backends: [...]`: the health of its members, passive (each
 * one's circuit breaker) and active (each one's engine asked on an interval whether it is up).
 */
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
  probeIntervalMs: z
    .int()
    .min(0)
    .default(10_000)
    .describe(
      "How often each backend is asked whether it is up (an engine's GET /models, an upstream's GET /v1/models/<model>), once the service has started; 0: never. One found down is tried only after those that are up; one found up again ends its open circuit's cool-down, so that the next request probes it.",
    ),
});

export type FallbackConfig = z.infer<typeof fallbackConfig>;
