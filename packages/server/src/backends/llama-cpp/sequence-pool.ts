/**
 * One context, `concurrency` sequences: each request borrows a sequence and gives it back. A
 * lone llama-cpp backend, or a list's primary, is admitted by its own concurrency, so a borrow
 * always finds one. A llama-cpp fallback keeps its own sequence count under the list's larger
 * admission (backend-defaults.ts): when all are busy the answer is 529 overloaded, which moves
 * the request to the next backend, or reaches the client with a retry-after.
 */
import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';
import { ServiceError } from '@mms/protocol';

export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly size: number;

  constructor(context: Pick<LlamaContext, 'sequencesLeft' | 'getSequence'>) {
    while (context.sequencesLeft > 0) this.free.push(context.getSequence());
    this.size = this.free.length;
  }

  borrow(): LlamaContextSequence {
    const sequence = this.free.pop();
    if (!sequence) throw new ServiceError('overloaded', `Overloaded: every context sequence of this llama-cpp backend (${this.size}, its concurrency) is generating`, { retryAfterSeconds: 1 });
    return sequence;
  }

  giveBack(sequence: LlamaContextSequence): void {
    this.free.push(sequence);
  }
}
