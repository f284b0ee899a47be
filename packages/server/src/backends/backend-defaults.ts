/**
 * Backend settings whose default depends on where the backend sits, so the schemas leave them
 * unset and the model's config fills them in (config/config-schema.ts):
 * - Admission (`concurrency`, `queue`): one controller per model. In a `backends` list it
 *   admits the list's traffic as a whole, so only the first backend (the primary) sets it; a
 *   fallback's own values used to be dropped without a word, so they are a config error now.
 *   Every member carries the list's values, except a llama-cpp fallback's `concurrency`: that
 *   is its context sequences, each a full context of memory, so it keeps its own (default 1)
 *   rather than the list's 16 or 64 (an 8B model at 32k context with 16 sequences does not
 *   load). A request it has no free sequence for is a 529 (sequence-pool.ts), which moves the
 *   request on, or is the reply when it is the last.
 * - `firstByteTimeoutMs` of the remote backends: 120 s alone, or last in a list (it covers
 *   queueing and the prefill of a long prompt, and nothing comes after it); 30 s for a backend
 *   that has a fallback after it, since a hung primary costs each request this long before the
 *   next backend is tried (docs/backends.md explains the trade).
 * backend-placement.ts applies them, by what each kind says of itself (its `admission`, and
 * whether its config has `firstByteTimeoutMs`); this file holds only the values and the type, so
 * that the kinds' config files can read them without importing the list (issue 33: they made an
 * import circle with it).
 */
export const DEFAULT_CONCURRENCY = 16;
export const DEFAULT_QUEUE = 64;
export const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 120_000;
export const DEFAULT_FIRST_BYTE_TIMEOUT_BEFORE_FALLBACK_MS = 30_000;

/** A backend config with the defaults above applied. */
export type WithPlacedDefaults<T> = T extends unknown
  ? Omit<T, 'concurrency' | 'queue' | 'firstByteTimeoutMs'> & {
      concurrency: number;
      queue: number;
    } & ('firstByteTimeoutMs' extends keyof T ? { firstByteTimeoutMs: number } : unknown)
  : never;
