/** What the limiter's tests share (key-limiter*.test.ts). */
import type { KeyLimits } from '../src/keys/client-key.js';

/** A key's limits: those given, every other one unset. */
export function limits(given: Partial<KeyLimits>): KeyLimits {
  return {
    requestsPerMinute: undefined,
    inputTokensPerMinute: undefined,
    outputTokensPerMinute: undefined,
    concurrent: undefined,
    tokensPerDay: undefined,
    tokensPerMonth: undefined,
    ...given,
  };
}
