/**
 * Telemetry hooks (issue 5): one call per HTTP attempt, per retry at any layer, per decline.
 * Hooks run inline; one that throws fails the call, so keep them cheap and total.
 */

export interface AttemptInfo {
  model: string;
  /** 1 for the first HTTP attempt of a call, counting across every layer. */
  attempt: number;
  /**
   * What the attempt came to: a message, an HTTP status, a stream error, a 2xx whose body is no
   * message (`unreadable`), a connection failure, the deadline.
   */
  outcome: 'message' | 'status' | 'stream-error' | 'unreadable' | 'connection' | 'deadline';
  status: number | undefined;
  requestId: string | undefined;
  durationMs: number;
  /** One line; empty for a message. */
  detail: string;
}

export interface RetryInfo {
  /** `http`: transport ladder; `answer`: no usable answer; `guardrail`: a rejected answer; `continuation`: pause_turn. */
  layer: 'http' | 'answer' | 'guardrail' | 'continuation';
  model: string;
  reason: string;
  /** Wait before the next attempt (0 outside the HTTP layer). */
  delayMs: number;
  /** The attempt about to start, counted as in AttemptInfo. */
  nextAttempt: number;
}

export interface DeclineInfo {
  model: string;
  tool: string;
  requestId: string | undefined;
  /** The text the model gave instead of the tool call. */
  text: string;
  /**
   * Set when the 2xx body could not be read at all: why (issue 32; spec, Client retry policy 4:
   * "A 2xx response counts once, even when its JSON is invalid"). `text` is then empty.
   */
  unreadable?: string;
}

export interface ClientHooks {
  onAttempt?(info: AttemptInfo): void;
  onRetry?(info: RetryInfo): void;
  onDecline?(info: DeclineInfo): void;
}
