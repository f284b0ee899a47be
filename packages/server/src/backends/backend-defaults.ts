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
 */
import type { BackendConfigInput } from './backend-config.js';

export const DEFAULT_CONCURRENCY = 16;
/** llama-cpp's concurrency is its context sequences, each a share of memory: one by default. */
export const DEFAULT_LLAMA_CPP_CONCURRENCY = 1;
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

/** A model's backends in order (its one `backend`, or its `backends` list), with the defaults applied. */
export function withPlacedDefaults<T extends BackendConfigInput>(configs: readonly T[]): Array<WithPlacedDefaults<T>> {
  const primary = configs[0];
  if (!primary) return [];
  const concurrency =
    primary.concurrency ?? (primary.type === 'llama-cpp' ? DEFAULT_LLAMA_CPP_CONCURRENCY : DEFAULT_CONCURRENCY);
  const queue = primary.queue ?? DEFAULT_QUEUE;
  return configs.map((config, index) => {
    const ownSequences = index > 0 && config.type === 'llama-cpp';
    const placed = {
      ...config,
      concurrency: ownSequences ? (config.concurrency ?? DEFAULT_LLAMA_CPP_CONCURRENCY) : concurrency,
      queue,
    };
    if (config.type !== 'openai-compatible' && config.type !== 'messages-upstream')
      return placed as WithPlacedDefaults<T>;
    const lastInList = index === configs.length - 1;
    const firstByteTimeoutMs =
      config.firstByteTimeoutMs ??
      (lastInList ? DEFAULT_FIRST_BYTE_TIMEOUT_MS : DEFAULT_FIRST_BYTE_TIMEOUT_BEFORE_FALLBACK_MS);
    return { ...placed, firstByteTimeoutMs } as WithPlacedDefaults<T>;
  });
}

/**
 * Fields a fallback (any backend after the first of a list) may not set, with why: the config
 * check reports them by their path. A llama-cpp fallback may set `concurrency`, its sequences.
 */
export function fallbackOnlyViolations(
  config: BackendConfigInput,
): Array<{ field: 'concurrency' | 'queue'; message: string }> {
  const refused = config.type === 'llama-cpp' ? (['queue'] as const) : (['concurrency', 'queue'] as const);
  const fields = refused.filter((field) => config[field] !== undefined);
  return fields.map((field) => ({
    field,
    message: `a fallback is admitted with its list: set ${field} on the first backend (the primary), whose value admits the whole list, and remove it here`,
  }));
}
