/**
 * One context, `concurrency` sequences: each step borrows a sequence and gives it back. A lone
 * llama-cpp backend, or a list's primary, is admitted by its own concurrency, so a borrow always
 * finds one. A llama-cpp fallback keeps its own sequence count under the list's larger admission
 * (backend-defaults.ts): when all are busy a turn's first step is refused at once (529, which
 * moves the request to the next backend or reaches the client with a retry-after), while a later
 * step of a turn this backend already answered waits its turn: its output has gone out, and a
 * 529 now would cut the reply in the middle.
 */
import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';
import { CapacityError } from '../capacity-error.js';

export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly waiting: Array<(sequence: LlamaContextSequence) => void> = [];
  private readonly size: number;

  constructor(context: Pick<LlamaContext, 'sequencesLeft' | 'getSequence'>) {
    while (context.sequencesLeft > 0) this.free.push(context.getSequence());
    this.size = this.free.length;
  }

  /** A free sequence; with none, a 529 unless `wait`, which queues until one is given back. */
  async borrow(options: { wait: boolean; signal: AbortSignal }): Promise<LlamaContextSequence> {
    const sequence = this.free.pop();
    if (sequence) return sequence;
    if (!options.wait)
      throw new CapacityError(
        `Overloaded: every context sequence of this llama-cpp backend (${this.size}, its concurrency) is generating`,
      );
    options.signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const take = (given: LlamaContextSequence) => {
        options.signal.removeEventListener('abort', leave);
        resolve(given);
      };
      const leave = () => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        reject(options.signal.reason);
      };
      this.waiting.push(take);
      options.signal.addEventListener('abort', leave, { once: true });
    });
  }

  giveBack(sequence: LlamaContextSequence): void {
    const next = this.waiting.shift();
    if (next) next(sequence);
    else this.free.push(sequence);
  }
}
