/**
 * Admission control per backend: at most `concurrency` requests generate at once, at most
 * `queue` more wait in order, and anything past that is refused at once with 529, so an
 * overloaded engine sheds load fast instead of timing every caller out.
 */
import { ServiceError } from '@model-messages/protocol';
import type { Cancellation } from '../backends/cancellation.js';

export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
  reject: (error: unknown) => void;
}

export class AdmissionController {
  private active = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queueLimit: number,
  ) {}

  /**
   * Admits a request, or refuses it: a slot now (its release), or a place in the queue (a
   * promise of the release, rejected with the cancellation's reason if the request leaves the
   * queue first). Past both limits it throws the 529 at once, synchronously, so that its caller
   * knows before it awaits anything whether the request was admitted: a stream opens as soon as
   * it is (routes/messages/route.ts), a refusal stays an HTTP status. A slot it gives must be
   * released, even one granted to a request that no longer wants it.
   */
  admit(cancellation: Cancellation): Release | Promise<Release> {
    cancellation.throwIfAborted();
    // A free slot is given as it is, with no promise to allocate and await: most requests.
    if (this.active < this.concurrency) return this.take();
    if (this.waiting.length >= this.queueLimit) {
      throw new ServiceError(
        'overloaded',
        `Overloaded: ${this.active} requests are generating and ${this.waiting.length} are queued on this model's backend`,
        { retryAfterSeconds: 1 },
      );
    }
    return new Promise<Release>((grant, reject) => {
      const waiter: Waiter = { grant, reject };
      this.waiting.push(waiter);
      // Only a request that waits needs the signal's event (backends/cancellation.ts).
      const signal = cancellation.signal;
      signal.addEventListener('abort', () => this.abandon(waiter, signal.reason), { once: true });
    });
  }

  get stats(): { active: number; queued: number } {
    return { active: this.active, queued: this.waiting.length };
  }

  private take(): Release {
    this.active += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.admitNext();
    };
  }

  private admitNext(): void {
    const next = this.waiting.shift();
    if (next) next.grant(this.take());
  }

  private abandon(waiter: Waiter, reason: unknown): void {
    const index = this.waiting.indexOf(waiter);
    if (index < 0) return;
    this.waiting.splice(index, 1);
    waiter.reject(reason);
  }
}
