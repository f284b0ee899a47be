/**
 * The keys' limits as this replica counts them: the whole story with the memory store, and with
 * Redis a guard beside it (key-limiter.ts). Every request this replica admits is charged here as
 * well, so when Redis stops answering under `onStoreError: "allow"`, the replica goes on from
 * what it knows rather than from nothing (issue 31), and a replica never admits more than a key's
 * limit on its own. Requests in flight are counted here from their first byte.
 */
import type { KeyLimits } from '../keys/client-key.js';
import {
  admitRequest,
  emptyKeyState,
  enterRequest,
  leaveRequest,
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

  enter(keyId: string, limits: KeyLimits): boolean {
    return enterRequest(this.state(keyId), limits);
  }

  leave(keyId: string, limits: KeyLimits): void {
    leaveRequest(this.state(keyId), limits);
  }

  admit(keyId: string, limits: KeyLimits, inputTokens: number, now: number): Admission {
    return admitRequest(this.state(keyId), limits, inputTokens, now);
  }

  refund(keyId: string, limits: KeyLimits, inputTokens: number, now: number): void {
    refundRequest(this.state(keyId), limits, inputTokens, now);
  }

  settle(keyId: string, limits: KeyLimits, outputTokens: number, now: number): void {
    settleRequest(this.state(keyId), limits, outputTokens, now);
  }

  /** The key's buckets as they stand, charging nothing. */
  readings(keyId: string, limits: KeyLimits, now: number): Partial<Record<BucketName, BucketReading>> {
    return readAll(this.state(keyId), limits, now);
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
