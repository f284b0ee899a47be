/**
 * A store of the keys' limits shared by replicas (Redis, docs/deployment.md). Each request costs
 * one call at admission (check and charge, the requests in flight across replicas included) and
 * one when its reply ends (its output tokens, its place in flight); each is one round trip. A
 * store that cannot answer rejects, and the limiter applies `limits.onStoreError`. An admission
 * the limiter gave up on is the store's to take back once it answers (redis-limit-store.ts).
 */
import type { KeyLimits } from '../keys/client-key.js';
import type { Admission } from './token-bucket.js';

export interface LimitStore {
  admit(keyId: string, limits: KeyLimits, inputTokens: number): Promise<Admission>;
  settle(keyId: string, limits: KeyLimits, outputTokens: number, lease: string | undefined): Promise<void>;
  close(): Promise<void>;
}
