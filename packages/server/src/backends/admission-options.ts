/** Admission control fields every backend config carries (see admission/admission-controller.ts). */
import { z } from 'zod';

export const admissionFields = {
  /** Requests generating at once on this backend. */
  concurrency: z.int().min(1).default(16).describe('Requests generating at once on this backend.'),
  /** Requests waiting for a slot; past it the answer is 529 overloaded_error at once. */
  queue: z.int().min(0).default(64).describe('Requests waiting for a slot; past it: 529 overloaded_error at once.'),
};
