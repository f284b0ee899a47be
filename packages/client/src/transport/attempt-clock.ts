/**
 * The timers of one HTTP attempt: the client's deadline for the whole attempt, and one phase
 * timer (connect, first event, idle) re-armed as the attempt moves on. Whichever fires aborts
 * the request and is remembered, so the outcome can say which limit ended it.
 */
import type { AttemptTimers } from '../deadline.js';

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
  private phaseTimer: NodeJS.Timeout | undefined;
  private readonly deadlineTimer: NodeJS.Timeout;
  private readonly started = Date.now();

  constructor(private readonly timers: AttemptTimers) {
    this.deadlineTimer = setTimeout(() => this.expire(true), timers.deadlineMs);
    this.enter('connect');
  }

  /** Starts `phase` with its own timer, unless the deadline comes first anyway. */
  enter(phase: AttemptPhase): void {
    clearTimeout(this.phaseTimer);
    this.phase = phase;
    const length = phase === 'connect' ? this.timers.connectMs : phase === 'first-event' ? this.timers.firstEventMs : this.timers.idleMs;
    const left = this.timers.deadlineMs - (Date.now() - this.started);
    if (length < left) this.phaseTimer = setTimeout(() => this.expire(false), length);
  }

  phaseLengthMs(): number {
    return this.phase === 'connect' ? this.timers.connectMs : this.phase === 'first-event' ? this.timers.firstEventMs : this.timers.idleMs;
  }

  dispose(): void {
    clearTimeout(this.phaseTimer);
    clearTimeout(this.deadlineTimer);
  }

  private expire(deadline: boolean): void {
    if (this.expired || this.controller.signal.aborted) return;
    this.expired = { phase: this.phase, deadline, afterMs: Date.now() - this.started };
    this.controller.abort(new Error(`${this.phase} timer expired`));
  }
}
