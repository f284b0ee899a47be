/**
 * What bench/replica-replay.ts and its engine replicas' process (engine-replicas.ts) say to each
 * other over IPC: the engines' settings, the commands, and the counts they answer.
 */

export interface EngineSettings {
  replicas: number;
  capacityTokens: number;
  prefillOverheadMs: number;
  prefillMicrosecondsPerToken: number;
  decodeMillisecondsPerToken: number;
  outputTokens: number;
}

export interface ReplicaStats {
  requests: number;
  promptTokens: number;
  cachedTokens: number;
  /** Requests in flight, integrated over the run: seconds x requests. */
  inFlightSeconds: number;
}

export interface EngineStats {
  replicas: ReplicaStats[];
  /** Tokens each conversation's own unbounded engine would have had cached. */
  idealCachedTokens: number;
}

export type EngineCommand =
  | { type: 'settings'; settings: EngineSettings }
  | { type: 'reset' }
  | { type: 'kill'; replica: number }
  | { type: 'stats' };

export const ENGINE_MODEL = 'replay/engine';
