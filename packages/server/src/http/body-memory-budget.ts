/**
 * listen.maxBodyMemoryInFlight (issue 31): the memory request bodies hold at once. Each body is
 * capped at 32 MB, but keys' limits and admission apply only once a body is read and parsed, so
 * nothing bounded how many were read together: 96 bodies of 30 MB sent at once from one key took
 * the service to 5.7 GB and held every reply, /health's too, for 42 s.
 *
 * A body holds its share from its first byte until its request ends. Until it is parsed that is
 * its chunks, on the event loop or in a parse worker (json-body-parser.ts); after, its parsed
 * value, which lives as long as the request (validation, the admission queue, the turn), and the
 * prompt a backend renders from it. Released at the parse instead, a flood of valid bodies would
 * wait parsed in the admission queues (64 queued and 16 running per model by default: 2.5 GB of
 * 32 MB bodies) outside any budget. So a body counts twice its length (MEMORY_PER_BODY_BYTE):
 * measured with 30 MB prompts, the service's peak grew by 2.0 bytes for each body byte admitted
 * (a 128 MB budget of raw bytes peaked at 716 MB, 512 MB at 1,541 MB), which made the memory
 * past the budget grow with it; counted twice, the peak stays within the budget and a fixed
 * margin (docs/reliability.md, "Request bodies in flight").
 *
 * A body with a declared length takes all of it before its first byte is read, so that a burst of
 * declared bodies cannot all start at once; a chunked body takes each chunk as it arrives. What
 * does not fit is refused 529 `overloaded` with retry-after, and its connection closes after the
 * reply, so that the rest of the body is never read.
 */
import { ServiceError } from '@model-messages/protocol';

/** Bodies come and go within seconds on a healthy service: a client may try again soon. */
const RETRY_AFTER_SECONDS = 1;
/** The memory a body's byte takes while its request runs: its bytes, then its parsed request and rendered prompt. */
export const MEMORY_PER_BODY_BYTE = 2;
const MEGABYTE = 1024 * 1024;

/** One app's budget: every request's hold takes from it and gives back to it. */
export class BodyMemoryBudget {
  private held = 0;
  private refused = 0;

  constructor(
    /** listen.maxBodyMemoryInFlight. */
    readonly limit: number,
  ) {}

  /** The limit in whole megabytes, as messages and the log state it. */
  get limitMegabytes(): number {
    return Math.floor(this.limit / MEGABYTE);
  }

  /** Memory held now by the bodies of requests in flight, in bytes (MEMORY_PER_BODY_BYTE a body byte). */
  get heldBytes(): number {
    return this.held;
  }

  /** Requests refused because their body did not fit, since the app started. */
  get refusals(): number {
    return this.refused;
  }

  /** A hold for one request's body, empty until its body is read. */
  hold(): BodyMemoryHold {
    return new BodyMemoryHold(this);
  }

  /** Takes `bytes` of memory if they fit in what is left; a refusal is counted otherwise. */
  take(bytes: number): boolean {
    if (this.held + bytes > this.limit) {
      this.refused += 1;
      return false;
    }
    this.held += bytes;
    return true;
  }

  giveBack(bytes: number): void {
    this.held -= bytes;
  }
}

/** What one request's body holds of the budget, given back all at once when the request ends. */
export class BodyMemoryHold {
  private bytes = 0;

  constructor(private readonly budget: BodyMemoryBudget) {}

  /** Memory held for this request's body, in bytes. */
  get held(): number {
    return this.bytes;
  }

  /** Takes the memory of `bodyBytes` more bytes of this body; false when it does not fit in what is left (answer refusal()). */
  take(bodyBytes: number): boolean {
    const memory = bodyBytes * MEMORY_PER_BODY_BYTE;
    if (!this.budget.take(memory)) return false;
    this.bytes += memory;
    return true;
  }

  /**
   * The 529 for a body that does not fit. `connection: close` makes node:http close the
   * connection once the reply is out, instead of reading the rest of the body to reuse it.
   */
  refusal(): ServiceError {
    return new ServiceError(
      'overloaded',
      `the service holds as many request bodies as it takes at once (${this.budget.limitMegabytes} MB of memory, listen.maxBodyMemoryInFlight); try again shortly`,
      { retryAfterSeconds: RETRY_AFTER_SECONDS, headers: { connection: 'close' } },
    );
  }

  /** The request ended: whatever its body held goes back. Idempotent. */
  release(): void {
    this.budget.giveBack(this.bytes);
    this.bytes = 0;
  }
}
