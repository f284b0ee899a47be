/**
 * One context, its sequences, lent one step at a time. Each sequence keeps the tokens it last
 * evaluated (its KV cache), and a step takes the free sequence that already holds the longest
 * prefix of its prompt, as llama.cpp server picks a slot: node-llama-cpp then erases the
 * sequence's diverging tail and evaluates only the rest (LlamaChat aligns the sequence with the
 * prompt before it evaluates). A sequence is lent to one step at a time, and what it holds is
 * read from the sequence itself when it is chosen, never from a record of ours: a step cancelled
 * half way leaves what it evaluated, which node-llama-cpp tracks, and the next step reuses that.
 *
 * A prompt that shares little with every free sequence must overwrite one: an empty one first,
 * then one whose prefix marked by a `cache_control` breakpoint survives the overwrite, then the
 * least recently used. There may be more sequences than steps allowed at once (`sequences` over
 * `concurrency`): the extra ones keep more conversations' prefixes.
 *
 * When another sequence, free or lent, holds a longer prefix of the prompt than the one chosen
 * (the same system prompt and tools under another conversation, say, or a step generating on the
 * only sequence that holds them), that prefix is copied into the chosen one (copyPrefix) instead of
 * evaluated again: a copy of the KV cache, milliseconds, where evaluating thousands of tokens
 * takes seconds on a CPU. The copied tokens count as reused, as vLLM's shared prefix blocks do.
 *
 * A lone llama-cpp backend, or a list's primary, is admitted by its own concurrency, so a borrow
 * always finds room. A llama-cpp fallback keeps its own concurrency under the list's larger
 * admission (backend-defaults.ts): when all are busy a turn's first step is refused at once
 * (529, which moves the request to the next backend or reaches the client with a retry-after),
 * while a later step of a turn this backend already answered waits its turn: its output has gone
 * out, and a 529 now would cut the reply in the middle.
 */
import type { LlamaContext, LlamaContextSequence, Token } from 'node-llama-cpp';
import { CapacityError } from '../capacity-error.js';

interface Slot {
  sequence: LlamaContextSequence;
  /** When it was last given back, in borrows: the order of least recent use. */
  lastUsed: number;
  /** Tokens of its last prompt up to that prompt's last cache_control breakpoint: the prefix to keep. */
  marked: number;
}

interface Waiter {
  tokens: readonly Token[];
  take: (sequence: LlamaContextSequence) => void;
}

export class SequencePool {
  private readonly free: Slot[] = [];
  private readonly lent = new Map<LlamaContextSequence, Slot>();
  private readonly waiting: Waiter[] = [];
  private readonly concurrency: number;
  private uses = 0;

  /**
   * Takes every sequence the context has left; at most `concurrency` (default: all) are lent at
   * once. `copyPrefixes: false` (a backend that evaluates every prompt whole) never copies.
   */
  constructor(
    context: Pick<LlamaContext, 'sequencesLeft' | 'getSequence'>,
    concurrency?: number,
    private readonly copyPrefixes = true,
  ) {
    while (context.sequencesLeft > 0) this.free.push({ sequence: context.getSequence(), lastUsed: 0, marked: 0 });
    this.concurrency = Math.min(concurrency ?? this.free.length, this.free.length);
  }

  /**
   * The free sequence best for a prompt of `tokens` (see the top of the file); with
   * `concurrency` lent, a 529 unless `wait`, which queues until one is given back.
   */
  async borrow(options: {
    wait: boolean;
    signal: AbortSignal;
    tokens?: readonly Token[];
  }): Promise<LlamaContextSequence> {
    const tokens = options.tokens ?? [];
    const sequence = await this.lendOrWait(tokens, options);
    if (!this.copyPrefixes) return sequence;
    try {
      await this.copyLongestPrefix(sequence, tokens);
    } catch (error) {
      // Not even cleared (the context is going away): the sequence goes back, the step fails.
      this.giveBack(sequence);
      throw error;
    }
    return sequence;
  }

  private lendOrWait(
    tokens: readonly Token[],
    options: { wait: boolean; signal: AbortSignal },
  ): LlamaContextSequence | Promise<LlamaContextSequence> {
    if (this.lent.size < this.concurrency) return this.lend(tokens);
    if (!options.wait)
      throw new CapacityError(
        `Overloaded: every context sequence of this llama-cpp backend (${this.concurrency}, its concurrency) is generating`,
      );
    options.signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        tokens,
        take: (given) => {
          options.signal.removeEventListener('abort', leave);
          resolve(given);
        },
      };
      const leave = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(options.signal.reason);
      };
      this.waiting.push(waiter);
      options.signal.addEventListener('abort', leave, { once: true });
    });
  }

  /**
   * Back to the pool, or to the first step waiting. `marked`: the tokens of the step's prompt up
   * to its last cache_control breakpoint, which a later overwrite should spare.
   */
  giveBack(sequence: LlamaContextSequence, marked = 0): void {
    const slot = this.lent.get(sequence);
    if (!slot) throw new Error('giveBack of a sequence this pool did not lend');
    this.lent.delete(sequence);
    this.uses += 1;
    slot.lastUsed = this.uses;
    slot.marked = marked;
    this.free.push(slot);
    const next = this.waiting.shift();
    if (next) next.take(this.lend(next.tokens));
  }

  /**
   * Copies into `target` (just lent) the longest prefix of `tokens` that another sequence holds,
   * where that is at least COPY_MIN_TOKENS more than `target` holds itself. A failed copy leaves
   * `target` empty: the step then evaluates its whole prompt.
   */
  private async copyLongestPrefix(target: LlamaContextSequence, tokens: readonly Token[]): Promise<void> {
    if (!canCopy(target)) return;
    const own = reusablePrefix(target, tokens);
    let source: { sequence: LlamaContextSequence; shared: number } | undefined;
    for (const slot of [...this.free, ...this.lent.values()]) {
      if (slot.sequence === target) continue;
      const shared = reusablePrefix(slot.sequence, tokens);
      if (shared >= own + COPY_MIN_TOKENS && shared > (source?.shared ?? 0))
        source = { sequence: slot.sequence, shared };
    }
    if (source === undefined) return;
    const copied = await copyPrefix(source.sequence, target, source.shared).catch(() => false);
    if (!copied) await target.clearHistory();
  }

  private lend(tokens: readonly Token[]): LlamaContextSequence {
    const slot = chooseSlot(this.free, tokens);
    this.free.splice(this.free.indexOf(slot), 1);
    this.lent.set(slot.sequence, slot);
    return slot.sequence;
  }
}

/** Fewer shared tokens than this are evaluated rather than copied: a copy moves the source's whole KV cache. */
export const COPY_MIN_TOKENS = 32;

/**
 * Copies the first `count` tokens `source` holds into `target`, replacing what `target` held:
 * node-llama-cpp's own sequence copy (llama.cpp's `llama_memory_seq_cp` under the context lock,
 * then the tail past `count` erased), which it keeps internal and uses for its decision contexts.
 * False where this node-llama-cpp has no such method (the pool then copies nothing), or the copy
 * did not take.
 */
async function copyPrefix(source: LlamaContextSequence, target: LlamaContextSequence, count: number): Promise<boolean> {
  if (!canCopy(target)) return false;
  return (await target._copyStateFromOtherSequence(source, count)) === true && target.nextTokenIndex === count;
}

type CopyingSequence = LlamaContextSequence & {
  _copyStateFromOtherSequence(source: LlamaContextSequence, upToTokenIndex: number): Promise<boolean>;
};

/** Whether this node-llama-cpp has its internal sequence copy. */
function canCopy(sequence: LlamaContextSequence): sequence is CopyingSequence {
  return typeof (sequence as Partial<CopyingSequence>)._copyStateFromOtherSequence === 'function';
}

/**
 * The prompt's tokens that `sequence` holds already and that the engine will not evaluate again:
 * their common prefix, less the prompt's last token, which is evaluated whatever the sequence
 * holds (LlamaChat needs its logits to generate the first token).
 */
export function reusablePrefix(sequence: Pick<LlamaContextSequence, 'compareContextTokens'>, tokens: readonly Token[]) {
  if (tokens.length === 0) return 0;
  return Math.min(sequence.compareContextTokens(tokens as Token[]).firstDifferentIndex, tokens.length - 1);
}

function chooseSlot(free: readonly Slot[], tokens: readonly Token[]): Slot {
  const scored = free.map((slot) => {
    const shared = reusablePrefix(slot.sequence, tokens);
    return { slot, shared, held: slot.sequence.nextTokenIndex };
  });
  // Worth taking: it shares at least half of what it holds, so reusing it loses little (an empty
  // sequence loses nothing); the longest shared prefix among those.
  const worth = scored.filter((entry) => entry.shared * 2 >= entry.held);
  if (worth.length > 0) return worth.reduce((best, entry) => (entry.shared > best.shared ? entry : best)).slot;
  // Every free sequence holds mostly another prompt: overwrite one whose marked prefix survives,
  // else the least recently used.
  const spared = scored.filter((entry) => entry.slot.marked <= entry.shared);
  const victims = spared.length > 0 ? spared : scored;
  return victims.reduce((oldest, entry) => (entry.slot.lastUsed < oldest.slot.lastUsed ? entry : oldest)).slot;
}
