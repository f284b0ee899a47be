/**
 * Admission control fields every backend config carries (see admission/admission-controller.ts).
 * Left unset by the schema: the model's config applies the defaults (backend-defaults.ts), since
 * in a `backends` list only the first backend sets them.
 */
import { z } from 'zod';
import { DEFAULT_CONCURRENCY, DEFAULT_QUEUE } from './backend-defaults.js';

export const admissionFields = {
  /** Requests generating at once on this backend. */
  concurrency: z
    .int()
    .min(1)
    .optional()
    .describe(
      `Requests generating at once on this model; default ${DEFAULT_CONCURRENCY}. In a backends list only the first backend sets it, for the whole list.`,
    ),
  /** Requests waiting for a slot; past it the answer is 529 overloaded_error at once. */
  queue: z
    .int()
    .min(0)
    .optional()
    .describe(
      `Requests waiting for a slot; past it: 529 overloaded_error at once. Default ${DEFAULT_QUEUE}. In a backends list only the first backend sets it, for the whole list.`,
    ),
};
