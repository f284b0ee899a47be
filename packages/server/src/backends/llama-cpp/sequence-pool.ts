/**
 * One context, `concurrency` sequences: each admitted request borrows a sequence and gives it
 * back. Admission control already bounds the borrowers, so a borrow never waits.
 */
import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';

export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];

  constructor(context: LlamaContext) {
    while (context.sequencesLeft > 0) this.free.push(context.getSequence());
  }

  borrow(): LlamaContextSequence {
    const sequence = this.free.pop();
    if (!sequence) throw new Error('no free context sequence: admission concurrency exceeds the context sequences');
    return sequence;
  }

  giveBack(sequence: LlamaContextSequence): void {
    this.free.push(sequence);
  }
}
