/** Limit state in this process (`limits.store: {"type": "memory"}`, the default): one state per key id. */
import type { KeyLimits } from '../keys/client-key.js';
import type { LimitStore } from './limit-store.js';
import { admitRequest, emptyKeyState, settleRequest, type Admission, type KeyState } from './token-bucket.js';

export class MemoryLimitStore implements LimitStore {
  /** By key id; only configured keys with limits come here, so it holds at most one per entry. */
  private readonly states = new Map<string, KeyState>();

  async admit(keyId: string, limits: KeyLimits, inputTokens: number): Promise<Admission> {
    let state = this.states.get(keyId);
    if (state === undefined) {
      state = emptyKeyState();
      this.states.set(keyId, state);
    }
    return admitRequest(state, limits, inputTokens, Date.now());
  }

  async settle(keyId: string, limits: KeyLimits, outputTokens: number): Promise<void> {
    const state = this.states.get(keyId);
    if (state !== undefined) settleRequest(state, limits, outputTokens, Date.now());
  }

  async close(): Promise<void> {}
}
