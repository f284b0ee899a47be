/**
 * One backend's circuit breaker, per service process (replicas do not share it).
 * - closed: requests go through; `failureThreshold` retryable failures in a row open it.
 * - open: requests skip the backend until `cooldownMs` has passed.
 * - half-open: the first request after the cool-down is the probe; others keep skipping the
 *   backend until it ends. A success closes the circuit, a failure opens it for another cool-down.
 * Time comes from `now`, so that tests step a clock instead of sleeping.
 */

export interface CircuitBreakerOptions {
  failureThreshold: number;
  cooldownMs: number;
  now: () => number;
  /** Told of every change of state, for the log (../backend-events.ts). */
  onChange?: (from: CircuitState, to: CircuitState) => void;
}

export type CircuitState = 'closed' | 'open' | 'half-open';

export class CircuitBreaker {
  private consecutiveFailures = 0;
  private openedAt: number | undefined;
  private probing = false;

  constructor(private readonly options: CircuitBreakerOptions) {}

  get state(): CircuitState {
    if (this.openedAt === undefined) return 'closed';
    return this.probing ? 'half-open' : 'open';
  }

  /** Whether a request may use the backend now, without claiming the probe. */
  get available(): boolean {
    if (this.openedAt === undefined) return true;
    return !this.probing && this.options.now() - this.openedAt >= this.options.cooldownMs;
  }

  /** Milliseconds until an open circuit lets a probe through (0 when it would now). */
  get retryInMs(): number {
    if (this.openedAt === undefined) return 0;
    return Math.max(0, this.openedAt + this.options.cooldownMs - this.options.now());
  }

  /**
   * Claims a request on the backend, or undefined when the circuit says skip it. An open
   * circuit past its cool-down makes this request the probe.
   */
  tryAcquire(): CircuitTicket | undefined {
    if (this.openedAt === undefined) return { probe: false };
    if (!this.available) return undefined;
    this.probing = true;
    this.changed('open');
    return { probe: true };
  }

  success(ticket: CircuitTicket): void {
    const before = this.state;
    this.consecutiveFailures = 0;
    this.openedAt = undefined;
    if (ticket.probe) this.probing = false;
    this.changed(before);
  }

  failure(ticket: CircuitTicket): void {
    const before = this.state;
    this.consecutiveFailures += 1;
    if (ticket.probe || (this.openedAt === undefined && this.consecutiveFailures >= this.options.failureThreshold))
      this.openedAt = this.options.now();
    if (ticket.probe) this.probing = false;
    this.changed(before);
  }

  /**
   * An active probe found the backend up (health-watch.ts, issue 36): an open circuit's cool-down
   * ends now, so that the next request is its probe, rather than waiting out `cooldownMs` for a
   * backend known to answer again. A probe request already running is left to give its verdict.
   */
  endCooldown(): void {
    if (this.openedAt !== undefined && !this.probing) this.openedAt = this.options.now() - this.options.cooldownMs;
  }

  /** A request that ended with no verdict on the backend (the client left): a probe may run again. */
  release(ticket: CircuitTicket): void {
    const before = this.state;
    if (ticket.probe) this.probing = false;
    this.changed(before);
  }

  private changed(before: CircuitState): void {
    const after = this.state;
    if (after !== before) this.options.onChange?.(before, after);
  }
}

/** One request's claim on a backend: whether it is the half-open probe. */
export interface CircuitTicket {
  probe: boolean;
}
