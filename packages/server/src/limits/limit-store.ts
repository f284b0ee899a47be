/**
 * Where the keys' limit state lives: this process's memory, or Redis, shared by replicas
 * (docs/deployment.md). Each request costs one call at admission (check and charge, at once)
 * and one when its reply ends (its output tokens, its place in flight); each is one round trip
 * to Redis. A store that cannot answer rejects, and the limiter applies `limits.onStoreError`.
 */
import type { KeyLimits } from '../keys/client-key.js';
import type { Admission } from './token-bucket.js';

export interface LimitStore {
  admit(keyId: string, limits: KeyLimits, inputTokens: number): Promise<Admission>;
  settle(keyId: string, limits: KeyLimits, outputTokens: number, lease: string | undefined): Promise<void>;
  close(): Promise<void>;
}
