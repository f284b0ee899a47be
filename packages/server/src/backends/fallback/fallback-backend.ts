/**
 * A model's `backends: [...]`. Its `balance` (issue 36, balance-policy.ts) orders the members for
 * each request: `failover`, the default, in the list's order, so the first is the primary and the
 * rest are fallbacks; `round-robin`, `least-busy` and `session` share the requests among replicas
 * of one engine. Whatever the order, a request moves on to the next member when one fails in a
 * retryable way (a 500, 529 or 429, a refused or dropped connection, a timeout) before its first
 * output; once a member has produced output, the request stays with it, and a later failure is
 * the reply's failure (an `event: error` on a stream), never a silent restart that would repeat
 * what the client has.
 *
 * The whole turn stays on the member that answered its first step: the `mms-backend` header
 * names it, and the steps after server tools continue the same model's work (and reuse its
 * engine's cache). Each member has a circuit breaker (circuit-breaker.ts), so that a failing one
 * costs a request nothing while its circuit is open, and an active probe (health-watch.ts), so
 * that one found down is tried only after the others.
 */
import { ServiceError } from '@model-messages/protocol';
import type { BackendReport } from '../backend-events.js';
import type { Backend, BackendReadiness, RequestRouting, TokenCountPurpose } from '../backend.js';
import type { ModelCall, ModelPrompt } from '../call/model-call.js';
import type { Cancellation } from '../cancellation.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import { CapacityError } from '../capacity-error.js';
import { DEFAULT_LOAD_EPSILON, type BalancePolicyName } from './balance-config.js';
import { balancePolicy } from './balance-policies.js';
import type { BalancePolicy, PassedOver } from './balance-policy.js';
import { CircuitBreaker, type CircuitState, type CircuitTicket } from './circuit-breaker.js';
import { HealthWatch } from './health-watch.js';
import { ListMember, type SkipReason } from './list-member.js';

export interface FallbackOptions {
  /** Retryable failures in a row that open a backend's circuit. */
  failureThreshold: number;
  /** How long an open circuit skips its backend before one request probes it again. */
  cooldownMs: number;
  /** How often `prepare` has the members probed from then on (health-watch.ts); 0 or left out: never. */
  probeIntervalMs?: number;
  /** How the members share requests (balance-policy.ts); `failover` when left out. */
  balance?: BalancePolicyName;
  /** `balance: "session"`'s bound on a member's load (session-policy.ts); DEFAULT_LOAD_EPSILON when left out. */
  loadEpsilon?: number;
  /** What places each member on a hash ring (member-identity.ts); by default its label. */
  identities?: readonly string[];
  /** The clock, in milliseconds; tests pass their own. */
  now?: () => number;
  /** Where fallbacks and circuit changes are reported, for the log and the metrics. */
  report?: BackendReport;
}

/** What the metrics and GET /ready read of one member (issue 36). */
export interface MemberState {
  label: string;
  circuit: CircuitState;
  inFlight: number;
  chosen: number;
  skipped: Readonly<Record<SkipReason, number>>;
  failures: ReadonlyMap<string, number>;
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

/** A failure's code as the error table names it; an unexpected one is `internal`. */
function failureCode(error: unknown): string {
  return error instanceof ServiceError ? error.code : 'internal';
}

/** A list's telemetry name before one of several backends has answered: no one provider yet. */
const LIST_TELEMETRY_NAME = 'mms.fallback';

/** What a list's own count or step runs with: no request of the service, no conversation. */
const NO_ROUTING: RequestRouting = { requestId: undefined, conversationKey: () => '' };

export class FallbackBackend implements Backend {
  readonly name: string;
  readonly telemetryName: string | undefined;
  /** The members, for the request views (and their policy) alone. */
  readonly members: readonly ListMember[];
  readonly policy: BalancePolicy;
  readonly report: BackendReport;
  readonly now: () => number;
  private readonly health: HealthWatch;

  constructor(backends: readonly Backend[], options: FallbackOptions) {
    if (backends.length === 0) throw new Error('a fallback list needs at least one backend');
    const now = options.now ?? Date.now;
    const report = options.report ?? (() => undefined);
    this.now = now;
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
      return new ListMember(label, options.identities?.[index] ?? label, backend, breaker);
    });
    this.policy = balancePolicy(
      options.balance ?? 'failover',
      this.members,
      options.loadEpsilon ?? DEFAULT_LOAD_EPSILON,
    );
    this.health = new HealthWatch(this.members, options.probeIntervalMs ?? 0, report);
    this.name = this.members.map((member) => member.label).join(',');
    this.telemetryName = this.members.length > 1 ? LIST_TELEMETRY_NAME : backends[0]!.telemetryName;
  }

  /**
   * A request's own view: it remembers which backend answered, for the header and later steps.
   * `routing` names the request in the log's fallback events and gives its conversation's key.
   */
  forRequest(routing: RequestRouting): Backend {
    return new FallbackRequest(this, routing);
  }

  stream(call: ModelCall, cancellation: Cancellation): AsyncIterable<StreamPart[]> {
    return this.forRequest(NO_ROUTING).stream(call, cancellation);
  }

  countTokens(prompt: ModelPrompt, purpose: TokenCountPurpose): Promise<number> {
    return this.forRequest(NO_ROUTING).countTokens(prompt, purpose);
  }

  /** Each member's circuit and counts, by label: for the metrics and tests. */
  memberStates(): MemberState[] {
    return this.members.map((member) => ({
      label: member.label,
      circuit: member.breaker.state,
      inFlight: member.inFlight,
      chosen: member.chosen,
      skipped: member.skipped,
      failures: member.failures,
    }));
  }

  /** Prepares the members in order, then starts probing them (health-watch.ts). */
  async prepare(options: { progress: boolean }): Promise<string> {
    const lines: string[] = [];
    for (const [index, member] of this.members.entries()) {
      lines.push(
        `${index === 0 ? 'primary' : `fallback ${index}`} ${member.label}: ${await member.backend.prepare(options)}`,
      );
    }
    this.health.start();
    return lines.join('; ');
  }

  /** In list order, one at a time: two models loading at once compete for memory and cores. */
  async load(): Promise<void> {
    for (const member of this.members) await member.backend.load();
  }

  /** Each member's readiness, named by its label, with its circuit and load; an answer is also its health. */
  async readiness(): Promise<BackendReadiness[]> {
    const answers = await this.health.probe();
    return answers.flatMap((answer, index) => {
      const member = this.members[index]!;
      return answer.map((entry) => ({
        ...entry,
        backend: member.label,
        circuit: member.breaker.state,
        inFlight: member.inFlight,
      }));
    });
  }

  async close(): Promise<void> {
    this.health.stop();
    await Promise.all(this.members.map((member) => member.backend.close()));
  }
}

/** Counts a member a generated request passed over. */
const countSkip: PassedOver = (member, reason) => member.skip(reason);

/**
 * The members in the policy's order, those a probe found down after the others (each counted
 * as passed over while no member up stood before it, when `passedOver` is given).
 */
function upFirst(order: readonly ListMember[], passedOver: PassedOver | undefined): readonly ListMember[] {
  if (!order.some((member) => member.down)) return order;
  const up: ListMember[] = [];
  const down: ListMember[] = [];
  for (const member of order) {
    if (!member.down) up.push(member);
    else {
      down.push(member);
      if (up.length === 0) passedOver?.(member, 'down');
    }
  }
  return [...up, ...down];
}

class FallbackRequest implements Backend {
  /** Members that failed this request already: not tried again for it. */
  private failed: Set<ListMember> | undefined;
  /** The member that produced this turn's first output. */
  private answeredBy: ListMember | undefined;

  constructor(
    private readonly list: FallbackBackend,
    private readonly routing: RequestRouting,
  ) {}

  get name(): string {
    return this.answeredBy?.label ?? this.list.name;
  }

  get telemetryName(): string | undefined {
    return this.answeredBy ? this.answeredBy.backend.telemetryName : this.list.telemetryName;
  }

  /**
   * The first count a member that may be used gives, in the policy's order. A member whose count
   * fails in a retryable way (its engine timed out, refused, answered 5xx) is not asked to
   * generate this request either: asking a hung engine again would cost the caller its time limit
   * twice. Counting claims no probe and gives no circuit verdict, though: a count proves little of
   * generation (most backends count locally, and an engine's tokenizer endpoint is not its
   * generation), so only generation opens or closes a circuit.
   */
  async countTokens(prompt: ModelPrompt, purpose: TokenCountPurpose): Promise<number> {
    let lastError: unknown;
    for (const member of this.candidates(undefined)) {
      if (!member.breaker.available) continue;
      try {
        return await member.backend.countTokens(prompt, purpose);
      } catch (error) {
        if (!isRetryableFailure(error)) throw error;
        this.fail(member);
        this.reportFallback(member, 'count', error);
        lastError = error;
      }
    }
    throw lastError ?? this.allOpen();
  }

  async *stream(call: ModelCall, cancellation: Cancellation): AsyncGenerator<StreamPart[]> {
    if (this.answeredBy) {
      // A later step of the turn: its member is chosen; a failure now is the reply's failure.
      const member = this.answeredBy;
      const iterator = member.backend.stream(call, cancellation)[Symbol.asyncIterator]();
      member.inFlight += 1;
      yield* relay(member, { probe: false }, iterator, undefined, cancellation);
      return;
    }
    let lastError: unknown;
    for (const member of this.candidates(countSkip)) {
      const ticket = member.breaker.tryAcquire();
      if (!ticket) {
        member.skip('open');
        continue;
      }
      member.chosen += 1;
      member.inFlight += 1;
      const startedAt = this.list.now();
      let iterator: AsyncIterator<StreamPart[]> | undefined;
      let first: IteratorResult<StreamPart[]>;
      try {
        iterator = member.backend.stream(call, cancellation)[Symbol.asyncIterator]();
        // Nothing has reached the client until a batch with parts in it.
        do first = await iterator.next();
        while (!first.done && first.value.length === 0);
      } catch (error) {
        member.inFlight -= 1;
        if (cancellation.aborted || !isRetryableFailure(error)) {
          member.breaker.release(ticket);
          throw error;
        }
        chargeFailure(member, ticket, error);
        this.fail(member);
        this.reportFallback(member, 'generate', error);
        lastError = error;
        continue;
      }
      member.firstOutputAfter(this.list.now() - startedAt);
      this.answeredBy = member;
      yield* relay(member, ticket, iterator, first, cancellation);
      return;
    }
    throw lastError ?? this.allOpen();
  }

  async prepare(): Promise<string> {
    return this.list.name;
  }

  /** A request's view loads nothing: the list did (FallbackBackend.load). */
  async load(): Promise<void> {}

  readiness(): Promise<BackendReadiness[]> {
    return this.list.readiness();
  }

  async close(): Promise<void> {}

  /** The members this request may still try, in the order it tries them. */
  private candidates(passedOver: PassedOver | undefined): readonly ListMember[] {
    const order = upFirst(this.list.policy.order(this.list.members, this.routing, passedOver), passedOver);
    const failed = this.failed;
    return failed === undefined ? order : order.filter((member) => !failed.has(member));
  }

  private fail(member: ListMember): void {
    (this.failed ??= new Set()).add(member);
  }

  /** A member failed this request before its first output: the request moves on (or fails, when none is left). */
  private reportFallback(member: ListMember, phase: 'count' | 'generate', error: unknown): void {
    this.list.report({
      type: 'fallback',
      requestId: this.routing.requestId,
      backend: member.label,
      phase,
      errorCode: failureCode(error),
    });
  }

  /** Every circuit is open: refuse at once, with when to come back. */
  private allOpen(): ServiceError {
    const waitMs = Math.min(...this.list.members.map((member) => member.breaker.retryInMs));
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return new ServiceError(
      'overloaded',
      `Overloaded: every backend of this model (${this.list.name}) failed recently; the next is tried again in ${seconds} s`,
      { retryAfterSeconds: seconds },
    );
  }
}

/**
 * A retryable failure opens the circuit in time and counts among the member's failures; a
 * member that was only full does neither.
 */
function chargeFailure(member: ListMember, ticket: CircuitTicket, error: unknown): void {
  if (error instanceof CapacityError) {
    member.breaker.release(ticket);
    return;
  }
  member.breaker.failure(ticket);
  member.failed(failureCode(error));
}

/**
 * Passes a member's batches on and gives its circuit the verdict: a step that ran to its end
 * (or that the consumer ended, as the loop does at `finish`) is a success, a retryable failure
 * a failure, and a client that left no verdict at all. The step leaves the member's count of
 * steps in flight however it ends.
 */
async function* relay(
  member: ListMember,
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
    member.inFlight -= 1;
    if (!settled) {
      if (cancellation.aborted) member.breaker.release(ticket);
      else member.breaker.success(ticket);
    }
    // Left early (the loop stops at `finish`, or after one tool call): stop the backend too.
    if (!done) await iterator.return?.(undefined);
  }
}
