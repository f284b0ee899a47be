/**
 * listen.maxBodyBytesInFlight (issue 31): the request-body bytes the service holds at once. Each
 * body is capped at 32 MB, but keys' limits and admission apply only once a body is read and
 * parsed, so nothing bounded how many were read together: 96 bodies of 30 MB sent at once from
 * one key took the service to 5.7 GB and held every reply, /health's too, for 42 s.
 *
 * A body holds its bytes from its first byte until its request ends. Until it is parsed they are
 * its chunks, on the event loop or in a parse worker (json-body-parser.ts); after that they are
 * its parsed value, which lives as long as the request (validation, the admission queue, the
 * turn) and is at most about as large for the bodies that matter (long text, base64 images: one
 * byte a character). Released at the parse instead, a flood of valid bodies would wait parsed in
 * the admission queues (64 queued and 16 running per model by default: 2.5 GB of 32 MB bodies)
 * outside any budget.
 *
 * A body with a declared length takes all of it before its first byte is read, so that a burst of
 * declared bodies cannot all start at once; a chunked body takes each chunk as it arrives. What
 * does not fit is refused 529 `overloaded` with retry-after, and its connection closes after the
 * reply, so that the rest of the body is never read.
 */
import { ServiceError } from '@model-messages/protocol';

/** Bodies come and go within seconds on a healthy service: a client may try again soon. */
const RETRY_AFTER_SECONDS = 1;
const MEGABYTE = 1024 * 1024;

/** One app's budget: every request's hold takes from it and gives back to it. */
export class BodyBytesBudget {
  private held = 0;
  private refused = 0;

  constructor(
    /** listen.maxBodyBytesInFlight. */
    readonly limit: number,
  ) {}

  /** The limit in whole megabytes, as messages and the log state it. */
  get limitMegabytes(): number {
    return Math.floor(this.limit / MEGABYTE);
  }

  /** Bytes held now by the bodies of requests in flight. */
  get bytesInFlight(): number {
    return this.held;
  }

  /** Requests refused because their body did not fit, since the app started. */
  get refusals(): number {
    return this.refused;
  }

  /** A hold for one request's body, empty until its body is read. */
  hold(): BodyBytesHold {
    return new BodyBytesHold(this);
  }

  /** Takes `bytes` if they fit in what is left; a refusal is counted otherwise. */
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
export class BodyBytesHold {
  private bytes = 0;

  constructor(private readonly budget: BodyBytesBudget) {}

  /** Bytes held by this request's body. */
  get held(): number {
    return this.bytes;
  }

  /** Takes `bytes` more for this body; false when they do not fit in what is left (answer refusal()). */
  take(bytes: number): boolean {
    if (!this.budget.take(bytes)) return false;
    this.bytes += bytes;
    return true;
  }

  /**
   * The 529 for a body that does not fit. `connection: close` makes node:http close the
   * connection once the reply is out, instead of reading the rest of the body to reuse it.
   */
  refusal(): ServiceError {
    return new ServiceError(
      'overloaded',
      `the service holds as many request body bytes as it takes at once (${this.budget.limitMegabytes} MB, listen.maxBodyBytesInFlight); try again shortly`,
      { retryAfterSeconds: RETRY_AFTER_SECONDS, headers: { connection: 'close' } },
    );
  }

  /** The request ended: whatever its body held goes back. Idempotent. */
  release(): void {
    this.budget.giveBack(this.bytes);
    this.bytes = 0;
  }
}
