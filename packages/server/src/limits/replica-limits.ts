/**
 * The keys' limits as this replica counts them: the whole story with the memory store, and with
 * Redis a guard beside it (key-limiter.ts). Every request this replica admits is charged here as
 * well, so when Redis stops answering under `onStoreError: "allow"`, the replica goes on from
 * what it knows rather than from nothing (issue 31), and a replica never admits more than a key's
 * limit on its own. Requests in flight are counted here from their first byte. The quotas (issue
 * 37) are counted here too (quota-counter.ts), written through to the data folder's database
 * with the memory store.
 */
import type { KeyLimits } from '../keys/client-key.js';
import { QuotaCounter, type QuotaLedger, type QuotaReadings } from './quota-counter.js';
import {
  bucketRefusal,
  chargeBuckets,
  emptyKeyState,
  enterRequest,
  leaveRequest,
  longerWait,
  NO_REFUSAL,
  readAll,
  refundRequest,
  settleRequest,
  type Admission,
  type BucketName,
  type BucketReading,
  type KeyState,
} from './token-bucket.js';

export class ReplicaLimits {
  /** By key id; only configured keys with limits come here, so it holds at most one per entry. */
  private readonly states = new Map<string, KeyState>();
  private readonly quotas: QuotaCounter;

  /** `ledger`: where the quota counts outlive the process (the memory store's database); none beside Redis. */
  constructor(ledger?: QuotaLedger) {
    this.quotas = new QuotaCounter(ledger);
  }

  enter(keyId: string, limits: KeyLimits): boolean {
    return enterRequest(this.state(keyId), limits);
  }

  leave(keyId: string, limits: KeyLimits): void {
    leaveRequest(this.state(keyId), limits);
  }

  /** Checks every bucket and quota of the key, and charges them all when every one has room. */
  admit(keyId: string, limits: KeyLimits, inputTokens: number, now: number): Admission {
    const state = this.state(keyId);
    const refusal = longerWait(
      bucketRefusal(state, limits, inputTokens, now),
      this.quotas.refusal(keyId, limits, inputTokens, now) ?? NO_REFUSAL,
    );
    if (refusal.refusedBy === undefined) {
      chargeBuckets(state, limits, inputTokens, now);
      this.quotas.charge(keyId, limits, inputTokens, now);
    }
    return {
      ...refusal,
      readings: readAll(state, limits, now),
      quotas: this.quotas.readings(keyId, limits, now),
      lease: undefined,
    };
  }

  refund(keyId: string, limits: KeyLimits, inputTokens: number, now: number): void {
    refundRequest(this.state(keyId), limits, inputTokens, now);
    this.quotas.charge(keyId, limits, -inputTokens, now);
  }

  settle(keyId: string, limits: KeyLimits, outputTokens: number, now: number): void {
    settleRequest(this.state(keyId), limits, outputTokens, now);
    this.quotas.charge(keyId, limits, outputTokens, now);
  }

  /** The shared store's quota counts after an admission: this replica's own rise to them. */
  raiseQuotas(keyId: string, limits: KeyLimits, shared: QuotaReadings, now: number): void {
    this.quotas.raise(keyId, limits, shared, now);
  }

  /** The key's buckets as they stand, charging nothing. */
  readings(keyId: string, limits: KeyLimits, now: number): Partial<Record<BucketName, BucketReading>> {
    return readAll(this.state(keyId), limits, now);
  }

  /** The key's quotas as they stand. */
  quotaReadings(keyId: string, limits: KeyLimits, now: number): QuotaReadings {
    return this.quotas.readings(keyId, limits, now);
  }

  /** The key's requests in flight on this replica. */
  inFlight(keyId: string): number {
    return this.states.get(keyId)?.inFlight ?? 0;
  }

  private state(keyId: string): KeyState {
    let state = this.states.get(keyId);
    if (state === undefined) {
      state = emptyKeyState();
      this.states.set(keyId, state);
    }
    return state;
  }
}
