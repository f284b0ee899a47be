/**
 * A model's `backends: [...]`: the first is the primary, the rest are fallbacks in order. A
 * request moves on to the next backend when one fails in a retryable way (a 500, 529 or 429,
 * a refused or dropped connection, a timeout) before its first output; once a backend has
 * produced output, the request stays with it, and a later failure is the reply's failure (an
 * `event: error` on a stream), never a silent restart that would repeat what the client has.
 *
 * The whole turn stays on the backend that answered its first step: the `mms-backend` header
 * names it, and the steps after server tools continue the same model's work. Each backend has a
 * circuit breaker (circuit-breaker.ts), so that a failing primary costs a request nothing while
 * its circuit is open.
 */
import { ServiceError } from '@model-messages/protocol';
import type { BackendReport } from '../backend-events.js';
import type { Backend, BackendReadiness, TokenCountPurpose } from '../backend.js';
import type { ModelCall, ModelPrompt } from '../call/model-call.js';
import type { Cancellation } from '../cancellation.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import { CapacityError } from '../capacity-error.js';
import { CircuitBreaker, type CircuitState, type CircuitTicket } from './circuit-breaker.js';

export interface FallbackOptions {
  /** Retryable failures in a row that open a backend's circuit. */
  failureThreshold: number;
  /** How long an open circuit skips its backend before one request probes it again. */
  cooldownMs: number;
  /** The clock, in milliseconds; tests pass their own. */
  now?: () => number;
  /** Where fallbacks and circuit changes are reported, for the log and the metrics. */
  report?: BackendReport;
}

interface Member {
  /** The backend's name, numbered by its place in the list when two share a name. */
  label: string;
  backend: Backend;
  breaker: CircuitBreaker;
}

/**
 * The failures another backend may well not have: 500, 504 (timeouts), 529 (overload), 429
 * (rate limits). Not the request's 4xx, nor `model_output_invalid`: that is one sample of the
 * model's output failing its schema, which says nothing of the engine's health.
 */
const RETRYABLE_CODES: ReadonlySet<string> = new Set(['internal', 'timeout', 'overloaded', 'rate_limited']);

export function isRetryableFailure(error: unknown): boolean {
  // Anything but a ServiceError is an unexpected failure of the backend itself.
  return !(error instanceof ServiceError) || RETRYABLE_CODES.has(error.code);
}

/** A list's telemetry name before one of several backends has answered: no one provider yet. */
const LIST_TELEMETRY_NAME = 'mms.fallback';

export class FallbackBackend implements Backend {
  readonly name: string;
  readonly telemetryName: string | undefined;
  private readonly members: readonly Member[];
  private readonly report: BackendReport;

  constructor(backends: readonly Backend[], options: FallbackOptions) {
    if (backends.length === 0) throw new Error('a fallback list needs at least one backend');
    const now = options.now ?? Date.now;
    const report = options.report ?? (() => undefined);
    this.report = report;
    const counts = new Map<string, number>();
    for (const backend of backends) counts.set(backend.name, (counts.get(backend.name) ?? 0) + 1);
    this.members = backends.map((backend, index) => {
      const label = (counts.get(backend.name) ?? 0) > 1 ? `${backend.name}#${index + 1}` : backend.name;
      const breaker = new CircuitBreaker({
        failureThreshold: options.failureThreshold,
        cooldownMs: options.cooldownMs,
        now,
        onChange: (from, to) => report({ type: 'circuit', backend: label, from, to }),
      });
      return { label, backend, breaker };
    });
    this.name = this.members.map((member) => member.label).join(',');
    this.telemetryName = this.members.length > 1 ? LIST_TELEMETRY_NAME : backends[0]!.telemetryName;
  }

  /**
   * A request's own view: it remembers which backend answered, for the header and later steps.
   * `requestId` names the request in the log's fallback events.
   */
  forRequest(requestId?: string): Backend {
    return new FallbackRequest(this.members, this.name, this.telemetryName, this.report, requestId);
  }

  stream(call: ModelCall, cancellation: Cancellation): AsyncIterable<StreamPart[]> {
    return this.forRequest().stream(call, cancellation);
  }

  countTokens(prompt: ModelPrompt, purpose: TokenCountPurpose): Promise<number> {
    return this.forRequest().countTokens(prompt, purpose);
  }

  /** Each backend's circuit, by label: for tests and operators' logs. */
  circuits(): Array<{ label: string; state: CircuitState }> {
    return this.members.map((member) => ({ label: member.label, state: member.breaker.state }));
  }

  async prepare(options: { progress: boolean }): Promise<string> {
    const lines: string[] = [];
    for (const [index, member] of this.members.entries()) {
      lines.push(
        `${index === 0 ? 'primary' : `fallback ${index}`} ${member.label}: ${await member.backend.prepare(options)}`,
      );
    }
    return lines.join('; ');
  }

  /** In list order, one at a time: two models loading at once compete for memory and cores. */
  async load(): Promise<void> {
    for (const member of this.members) await member.backend.load();
  }

  readiness(): Promise<BackendReadiness[]> {
    return membersReadiness(this.members);
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((member) => member.backend.close()));
  }
}

/** Each member's readiness, named by its label in the list. */
async function membersReadiness(members: readonly Member[]): Promise<BackendReadiness[]> {
  const answers = await Promise.all(members.map((member) => member.backend.readiness()));
  return answers.flatMap((answer, index) => answer.map((entry) => ({ ...entry, backend: members[index]!.label })));
}

class FallbackRequest implements Backend {
  /** Backends that failed this request already: not tried again for it. */
  private readonly failed = new Set<Member>();
  /** The backend that produced this turn's first output. */
  private answeredBy: Member | undefined;

  constructor(
    private readonly members: readonly Member[],
    private readonly listName: string,
    private readonly listTelemetryName: string | undefined,
    private readonly report: BackendReport,
    private readonly requestId: string | undefined,
  ) {}

  get name(): string {
    return this.answeredBy?.label ?? this.listName;
  }

  get telemetryName(): string | undefined {
    return this.answeredBy ? this.answeredBy.backend.telemetryName : this.listTelemetryName;
  }

  /**
   * The first count a backend that may be used gives. A backend whose count fails in a
   * retryable way (its engine timed out, refused, answered 5xx) is not asked to generate this
   * request either: asking a hung engine again would cost the caller its time limit twice.
   * Counting claims no probe and gives no circuit verdict, though: a count proves little of
   * generation (most backends count locally, and an engine's tokenizer endpoint is not its
   * generation), so only generation opens or closes a circuit.
   */
  async countTokens(prompt: ModelPrompt, purpose: TokenCountPurpose): Promise<number> {
    let lastError: unknown;
    for (const member of this.candidates()) {
      if (!member.breaker.available) continue;
      try {
        return await member.backend.countTokens(prompt, purpose);
      } catch (error) {
        if (!isRetryableFailure(error)) throw error;
        this.failed.add(member);
        this.reportFallback(member, 'count', error);
        lastError = error;
      }
    }
    throw lastError ?? this.allOpen();
  }

  async *stream(call: ModelCall, cancellation: Cancellation): AsyncGenerator<StreamPart[]> {
    if (this.answeredBy) {
      // A later step of the turn: its backend is chosen; a failure now is the reply's failure.
      yield* relay(
        this.answeredBy,
        { probe: false },
        this.answeredBy.backend.stream(call, cancellation)[Symbol.asyncIterator](),
        undefined,
        cancellation,
      );
      return;
    }
    let lastError: unknown;
    for (const member of this.candidates()) {
      const ticket = member.breaker.tryAcquire();
      if (!ticket) continue;
      let iterator: AsyncIterator<StreamPart[]> | undefined;
      let first: IteratorResult<StreamPart[]>;
      try {
        iterator = member.backend.stream(call, cancellation)[Symbol.asyncIterator]();
        // Nothing has reached the client until a batch with parts in it.
        do first = await iterator.next();
        while (!first.done && first.value.length === 0);
      } catch (error) {
        if (cancellation.aborted || !isRetryableFailure(error)) {
          member.breaker.release(ticket);
          throw error;
        }
        chargeFailure(member, ticket, error);
        this.failed.add(member);
        this.reportFallback(member, 'generate', error);
        lastError = error;
        continue;
      }
      this.answeredBy = member;
      yield* relay(member, ticket, iterator, first, cancellation);
      return;
    }
    throw lastError ?? this.allOpen();
  }

  async prepare(): Promise<string> {
    return this.listName;
  }

  /** A request's view loads nothing: the list did (FallbackBackend.load). */
  async load(): Promise<void> {}

  readiness(): Promise<BackendReadiness[]> {
    return membersReadiness(this.members);
  }

  async close(): Promise<void> {}

  /** A backend failed this request before its first output: the request moves on (or fails, when none is left). */
  private reportFallback(member: Member, phase: 'count' | 'generate', error: unknown): void {
    const errorCode = error instanceof ServiceError ? error.code : 'internal';
    this.report({ type: 'fallback', requestId: this.requestId, backend: member.label, phase, errorCode });
  }

  private candidates(): Member[] {
    return this.members.filter((member) => !this.failed.has(member));
  }

  /** Every circuit is open: refuse at once, with when to come back. */
  private allOpen(): ServiceError {
    const waitMs = Math.min(...this.members.map((member) => member.breaker.retryInMs));
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return new ServiceError(
      'overloaded',
      `Overloaded: every backend of this model (${this.listName}) failed recently; the next is tried again in ${seconds} s`,
      { retryAfterSeconds: seconds },
    );
  }
}

/** A retryable failure opens the circuit in time; a backend that was only full does not. */
function chargeFailure(member: Member, ticket: CircuitTicket, error: unknown): void {
  if (error instanceof CapacityError) member.breaker.release(ticket);
  else member.breaker.failure(ticket);
}

/**
 * Passes a backend's batches on and gives its circuit the verdict: a step that ran to its end
 * (or that the consumer ended, as the loop does at `finish`) is a success, a retryable failure
 * a failure, and a client that left no verdict at all.
 */
async function* relay(
  member: Member,
  ticket: CircuitTicket,
  iterator: AsyncIterator<StreamPart[]>,
  first: IteratorResult<StreamPart[]> | undefined,
  cancellation: Cancellation,
): AsyncGenerator<StreamPart[]> {
  let settled = false;
  let done = false;
  try {
    for (let next = first ?? (await iterator.next()); !next.done; next = await iterator.next()) yield next.value;
    done = true;
  } catch (error) {
    settled = true;
    if (!cancellation.aborted && isRetryableFailure(error)) chargeFailure(member, ticket, error);
    else member.breaker.release(ticket);
    throw error;
  } finally {
    if (!settled) {
      if (cancellation.aborted) member.breaker.release(ticket);
      else member.breaker.success(ticket);
    }
    // Left early (the loop stops at `finish`, or after one tool call): stop the backend too.
    if (!done) await iterator.return?.(undefined);
  }
}
