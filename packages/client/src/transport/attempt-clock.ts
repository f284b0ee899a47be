/**
 * The timers of one HTTP attempt: the client's deadline for the whole attempt, and one phase
 * timer (connect, first event, idle) re-armed as the attempt moves on. Whichever fires aborts
 * the request and is remembered, so the outcome can say which limit ended it.
 */
import type { AttemptTimers } from '../deadline.js';
import { setLongTimeout, type LongTimer } from './long-timer.js';

export type AttemptPhase = 'connect' | 'first-event' | 'idle';

export interface Expiry {
  phase: AttemptPhase;
  /** True when the client's deadline fired, false for the phase's own timer. */
  deadline: boolean;
  afterMs: number;
}

export class AttemptClock {
  readonly controller = new AbortController();
  expired: Expiry | undefined;
  private phase: AttemptPhase = 'connect';
  private phaseTimer: LongTimer | undefined;
  // Long timers: a far deadline (or a long phase setting) must not overflow Node's timer and fire at once.
  private readonly deadlineTimer: LongTimer;
  private readonly started = Date.now();

  constructor(private readonly timers: AttemptTimers) {
    this.deadlineTimer = setLongTimeout(() => this.expire(true), timers.deadlineMs);
    this.enter('connect');
  }

  /** Starts `phase` with its own timer, unless the deadline comes first anyway. */
  enter(phase: AttemptPhase): void {
    this.phaseTimer?.clear();
    this.phase = phase;
    const length =
      phase === 'connect'
        ? this.timers.connectMs
        : phase === 'first-event'
          ? this.timers.firstEventMs
          : this.timers.idleMs;
    const left = this.timers.deadlineMs - (Date.now() - this.started);
    if (length < left) this.phaseTimer = setLongTimeout(() => this.expire(false), length);
  }

  phaseLengthMs(): number {
    return this.phase === 'connect'
      ? this.timers.connectMs
      : this.phase === 'first-event'
        ? this.timers.firstEventMs
        : this.timers.idleMs;
  }

  dispose(): void {
    this.phaseTimer?.clear();
    this.deadlineTimer.clear();
  }

  private expire(deadline: boolean): void {
    if (this.expired || this.controller.signal.aborted) return;
    this.expired = { phase: this.phase, deadline, afterMs: Date.now() - this.started };
    this.controller.abort(new Error(`${this.phase} timer expired`));
  }
}
