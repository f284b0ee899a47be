/**
 * One backend of a model's `backends: [...]` as its list keeps it: the backend, its circuit, what
 * its last active probe said, and the counts a balancing policy reads and the metrics show
 * (issue 36). Counted by this replica of mms alone: replicas share nothing.
 */
import type { Backend } from '../backend.js';
import type { CircuitBreaker } from './circuit-breaker.js';

/**
 * Why a request passed over a member that its policy put ahead of the one that took it: its
 * circuit was open, its last probe found it down, or (balance "session") it held more than its
 * share of the requests in flight. Listed once: the metrics label each count by it.
 */
export const SKIP_REASONS = ['open', 'down', 'busy'] as const;

export type SkipReason = (typeof SKIP_REASONS)[number];

/**
 * How much the latest time to first output weighs in a member's recent latency: about the last
 * ten requests count, so that a replica that slowed down is seen within a few requests.
 */
const LATENCY_WEIGHT = 0.2;

export class ListMember {
  /** Engine steps this replica of mms has on the member now. */
  inFlight = 0;
  /** Requests that began on the member: first tries and requests moved here from another alike. */
  chosen = 0;
  readonly skipped: Record<SkipReason, number> = { open: 0, down: 0, busy: 0 };
  /** Retryable failures of its steps (before or after output), by error code. */
  readonly failures = new Map<string, number>();
  /** Milliseconds from a step's start to its first output, weighted towards the latest; none yet: undefined. */
  recentLatencyMs: number | undefined;
  /** Its last active probe's verdict (health-watch.ts); undefined before one, or while none run. */
  probedUp: boolean | undefined;

  constructor(
    /** Its name, numbered by its place in the list when two share a name (`openai-compatible:vllm#2`). */
    readonly label: string,
    /** What places it on a hash ring: its address, the same in every replica's config (member-identity.ts). */
    readonly identity: string,
    readonly backend: Backend,
    readonly breaker: CircuitBreaker,
  ) {}

  /** Its last probe found it down: tried after the members that are up. */
  get down(): boolean {
    return this.probedUp === false;
  }

  /** A request may start on it now: its circuit lets one through and no probe found it down. */
  get usable(): boolean {
    return this.probedUp !== false && this.breaker.available;
  }

  skip(reason: SkipReason): void {
    this.skipped[reason] += 1;
  }

  failed(code: string): void {
    this.failures.set(code, (this.failures.get(code) ?? 0) + 1);
  }

  firstOutputAfter(milliseconds: number): void {
    this.recentLatencyMs =
      this.recentLatencyMs === undefined
        ? milliseconds
        : this.recentLatencyMs + LATENCY_WEIGHT * (milliseconds - this.recentLatencyMs);
  }
}
