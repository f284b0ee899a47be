/**
 * The caller's deadline and the client's own, a little earlier (spec, Timeouts: "the client
 * timeout is kept inside the caller's deadline, so the client reports the failure with more
 * detail"). Every transport timer is cut to what is left, so none can outlast the caller.
 */
import type { TransportTimeouts } from './client-options.js';
import { ClientConfigError } from './errors.js';

export interface DeadlineInput {
  /** Absolute: epoch milliseconds or a Date. */
  deadline?: number | Date;
  /** Relative to the call's start; ignored when `deadline` is given. */
  timeoutMs?: number;
}

/**
 * What the client keeps back to report with: 10% of the call's time, from 50 ms to 2 s. Enough
 * for timers that fire late on a busy event loop, and for the caller to act on the failure.
 */
export function reserveMs(totalMs: number): number {
  return Math.min(2_000, Math.max(50, totalMs * 0.1));
}

export class Deadline {
  /** Epoch ms of the caller's own deadline. */
  readonly callerEnd: number;
  /** Epoch ms at which the client stops: before the caller's deadline by reserveMs. */
  readonly end: number;

  constructor(
    callerEnd: number,
    private readonly now: () => number = Date.now,
  ) {
    const total = Math.max(0, callerEnd - now());
    this.callerEnd = callerEnd;
    this.end = callerEnd - reserveMs(total);
  }

  /** Throws ClientConfigError for a deadline or timeout that is no time, before anything is sent. */
  static from(input: DeadlineInput, defaultTimeoutMs: number, now: () => number = Date.now): Deadline {
    if (input.deadline !== undefined) return new Deadline(epochMs(input.deadline), now);
    return new Deadline(now() + timeoutMs(input.timeoutMs ?? defaultTimeoutMs), now);
  }

  leftMs(): number {
    return Math.max(0, this.end - this.now());
  }
}

/**
 * The types say number or Date, but a plain-JS caller can pass anything, and a loose reading
 * fails silently: Number(null) is 0, the epoch, so the call would time out at once with no
 * error naming the cause. Anything but a finite number or a valid Date is refused, the way
 * resolveOptions refuses a bad Client option.
 */
function epochMs(deadline: unknown): number {
  const end = deadline instanceof Date ? deadline.getTime() : typeof deadline === 'number' ? deadline : Number.NaN;
  if (!Number.isFinite(end))
    throw new ClientConfigError(`deadline: must be a Date or epoch milliseconds, got ${described(deadline)}`);
  return end;
}

/** The same rule as the Client's own timeoutMs (resolveOptions): a positive number of milliseconds. */
function timeoutMs(value: unknown): number {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value))
    throw new ClientConfigError(`timeoutMs: must be a positive number, got ${described(value)}`);
  return value;
}

function described(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

export interface AttemptTimers {
  /** The whole attempt may not run past this: the client's deadline. */
  deadlineMs: number;
  connectMs: number;
  firstEventMs: number;
  idleMs: number;
}

/** Each phase timer is its configured length, cut to the time left before the client's deadline. */
export function attemptTimers(leftMs: number, timeouts: Required<TransportTimeouts>): AttemptTimers {
  return {
    deadlineMs: leftMs,
    connectMs: Math.min(timeouts.connectMs, leftMs),
    firstEventMs: Math.min(timeouts.firstEventMs, leftMs),
    idleMs: Math.min(timeouts.idleMs, leftMs),
  };
}
