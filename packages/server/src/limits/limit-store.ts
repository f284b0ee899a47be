/**
 * A store of the keys' limits shared by replicas (Redis, docs/deployment.md). Each request costs
 * one call at admission (check and charge, the requests in flight across replicas and the quotas
 * included) and one when its reply ends (its output tokens, its place in flight); each is one
 * round trip. A store that cannot answer rejects, and the limiter applies `limits.onStoreError`.
 * An admission the limiter gave up on is the store's to take back once it answers
 * (redis-limit-store.ts).
 */
import type { KeyLimits } from '../keys/client-key.js';
import type { QuotaReadings } from './quota-counter.js';
import type { Admission, BucketName, BucketReading } from './token-bucket.js';

/** A key's limits as they stand, for the console (issue 37). */
export interface KeyStanding {
  readings: Partial<Record<BucketName, BucketReading>>;
  quotas: QuotaReadings;
  inFlight: number;
}

export interface LimitStore {
  admit(keyId: string, limits: KeyLimits, inputTokens: number): Promise<Admission>;
  settle(keyId: string, limits: KeyLimits, outputTokens: number, lease: string | undefined): Promise<void>;
  /** The key's limits as they stand, charging nothing. */
  read(keyId: string, limits: KeyLimits): Promise<KeyStanding>;
  close(): Promise<void>;
}
