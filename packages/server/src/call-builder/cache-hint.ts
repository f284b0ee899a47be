/** A wire `cache_control` as the model call carries it: spread into a part, present only when set. */
import type { CacheHint } from '../backends/call/model-call.js';

export function cacheHint(cacheControl: { ttl?: '5m' | '1h' | undefined } | null | undefined): { cache?: CacheHint } {
  return cacheControl ? { cache: { ttl: cacheControl.ttl } } : {};
}
