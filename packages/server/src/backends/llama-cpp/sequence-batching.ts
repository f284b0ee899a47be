/**
 * How the embedded engine fills llama.cpp's decode batches when several requests generate at once
 * on one context: node-llama-cpp's `itemPrioritizationStrategy`, called by its dispatch loop with
 * the queued evaluations each time it forms a batch. Its default leaves four generations about as
 * fast together as one alone (1.04 to 1.19x aggregate tokens/s, bench/llama-concurrency.ts), for two reasons:
 *
 * - The dispatch loop forms the next batch as soon as the last one is sampled. By then the
 *   sequences sampled first have queued their next token, but the last one's continuation has not
 *   run yet, so every batch holds one sequence fewer than are generating (3 of 4, every step).
 * - node-llama-cpp keeps a KV cache per sequence (`kv_unified` off), and llama.cpp then cuts a
 *   batch wherever the sequence ids are not consecutive and ascending (split_equal in
 *   llama-batch.cpp): four tokens queued as sequences 0, 1, 3, 2 run as three computations, and
 *   one token at a time is a matrix-vector product that reads every weight once per token.
 *
 * So a batch is held back (the strategy returns no items, and the dispatch loop asks again once
 * the pending promise callbacks have run) until every sequence that generated in the previous batch
 * has queued its next token, for at most HOLD_LIMIT asks in a row: a sequence whose generation
 * ended, or that waits on anything but promise callbacks, costs one bounded hold (HOLD_LIMIT).
 * Items go in sequence id order. Holding never waits on a timer, and a lone sequence never waits.
 * And every LOCK_YIELD_MS the dispatch loop is made to give up the context lock (takeQueued), which
 * a request arriving while others generate needs for its first step.
 *
 * The items do not say which sequence queued them: the strategy reads that from the context's
 * queue (`_queuedDecodes`, which node-llama-cpp builds the items from, in order), checking that
 * each entry holds the very token array of its item. Where that does not hold (another
 * node-llama-cpp version), it neither holds nor reorders: node-llama-cpp's own behaviour.
 */
import type { BatchItem, LlamaContext, LlamaContextOptions, LlamaModel, PrioritizedBatchItem } from 'node-llama-cpp';

/**
 * Asks in a row that may return nothing, each one pass of node-llama-cpp's dispatch loop. Measured
 * on the 125M test model: waiting for a last continuation takes a median 0.11 ms, and a hold that
 * runs to the limit (once, when a generation ends while others go on) 0.4 to 0.6 ms.
 */
export const HOLD_LIMIT = 64;

type Strategy = (options: { items: readonly BatchItem[]; size: number }) => PrioritizedBatchItem[];

interface QueuedDecode {
  sequenceId: number;
  tokens: unknown;
}

/** node-llama-cpp's queue of evaluations on a context (internal; read and moved, never made). */
interface ContextQueue {
  _queuedDecodes: QueuedDecode[];
  _queuedDecodeSequenceIds: Set<number>;
}

/** How long the dispatch loop keeps the context lock, at most, before waiters get it (takeQueued). */
export const LOCK_YIELD_MS = 50;

export interface SequenceBatching {
  /** For `createContext({ batching: { itemPrioritizationStrategy } })`. */
  readonly strategy: Strategy;
  /** The context the strategy serves; until attached, it keeps node-llama-cpp's order and never holds. */
  attach(context: LlamaContext): void;
}

/** A context of `model` whose batches are formed by sequenceBatching. */
export async function createBatchedContext(
  model: LlamaModel,
  options: Omit<LlamaContextOptions, 'batching'>,
): Promise<LlamaContext> {
  const batching = sequenceBatching();
  const context = await model.createContext({
    ...options,
    batching: { itemPrioritizationStrategy: batching.strategy },
  });
  batching.attach(context);
  return context;
}

/** `now`: the clock the lock's yields go by (tests give their own). */
export function sequenceBatching(now: () => number = () => performance.now()): SequenceBatching {
  let context: LlamaContext | undefined;
  /** Sequences that had a token with logits (one that samples) in the last batch formed. */
  let generating = new Set<number>();
  let holds = 0;
  let lastYield = now();
  /** The queue's entries while the dispatch loop lets go of the lock (takeQueued). */
  let aside: QueuedDecode[] | undefined;
  const strategy: Strategy = ({ items, size }) => {
    const sequenceIds = queuedSequenceIds(context, items);
    if (sequenceIds === undefined) return fairShares(items, size);
    // Letting go of the lock (takeQueued): while aside, whatever is queued joins it.
    if (aside === undefined && now() - lastYield >= LOCK_YIELD_MS) {
      lastYield = now();
      aside = [];
      setImmediate(restore);
    }
    if (aside !== undefined) {
      const taken = takeQueued(context!);
      if (taken !== undefined) {
        aside.push(...taken);
        return [];
      }
      aside = undefined;
    }
    const queued = new Set(sequenceIds);
    if (holds < HOLD_LIMIT && [...generating].some((sequenceId) => !queued.has(sequenceId))) {
      holds += 1;
      return [];
    }
    holds = 0;
    const ordered = items
      .map((item, index) => ({ item, sequenceId: sequenceIds[index] ?? 0 }))
      .sort((left, right) => left.sequenceId - right.sequenceId);
    const shares = fairShares(
      ordered.map(({ item }) => item),
      size,
    );
    generating = new Set(
      shares.flatMap((share, index) =>
        share.item.logits.slice(0, share.processAmount).some(Boolean) ? [ordered[index]?.sequenceId ?? -1] : [],
      ),
    );
    return shares;
  };
  /** The entries taken out go back, in their order, and a dispatch is asked for (it queues behind the waiters). */
  const restore = () => {
    const entries = aside ?? [];
    aside = undefined;
    if (entries.length === 0) return;
    const internal = context as unknown as ContextQueue;
    internal._queuedDecodes.push(...entries);
    for (const entry of entries) internal._queuedDecodeSequenceIds.add(entry.sequenceId);
    context!.dispatchPendingBatch();
  };
  return {
    strategy,
    attach(target) {
      context = target;
    },
  };
}

/**
 * Takes every entry out of node-llama-cpp's queue of evaluations, so that its dispatch loop can
 * give up the context lock. The loop holds it for as long as any evaluation is queued, so with two
 * or more sequences generating it never lets go, and whatever else needs the lock waits for every
 * generation to end: the start of a new request (LlamaChat aligning its sequence with the prompt),
 * a prefix copy, a cancelled generation's cleanup. Measured before this (two 600-token
 * generations, a third request sent just after): its first token came with the end of the other
 * two, 5.7 to 7.7 s later.
 *
 * Every LOCK_YIELD_MS the strategy takes the entries out and returns no items: the loop finds its
 * queue empty and ends, the lock goes to whoever waits for it, and on the next turn of the event
 * loop `restore` puts the entries back, in order, and asks for a dispatch, which queues for the
 * lock behind them. Undefined, and nothing taken, where the queue is not as expected.
 */
function takeQueued(context: LlamaContext): QueuedDecode[] | undefined {
  const internal = context as unknown as Partial<ContextQueue>;
  if (!Array.isArray(internal._queuedDecodes) || !(internal._queuedDecodeSequenceIds instanceof Set)) return undefined;
  const entries = internal._queuedDecodes.splice(0, internal._queuedDecodes.length);
  for (const entry of entries) internal._queuedDecodeSequenceIds.delete(entry.sequenceId);
  return entries;
}

/** The sequence of each item, read from the context's queue, or undefined where the queue does not match the items. */
function queuedSequenceIds(context: LlamaContext | undefined, items: readonly BatchItem[]): number[] | undefined {
  const queue = (context as unknown as { _queuedDecodes?: unknown } | undefined)?._queuedDecodes;
  if (!Array.isArray(queue) || queue.length !== items.length) return undefined;
  const sequenceIds: number[] = [];
  for (const [index, item] of items.entries()) {
    const entry = queue[index] as Partial<QueuedDecode> | undefined;
    if (entry?.tokens !== item.tokens || typeof entry.sequenceId !== 'number') return undefined;
    sequenceIds.push(entry.sequenceId);
  }
  return sequenceIds;
}

/**
 * node-llama-cpp's "maximumParallelism" in short: every item gets an equal share of the batch (at
 * least one token), and what the short items leave is shared evenly among the clipped ones. Unlike
 * it, no item goes first by `evaluationPriority`, which the service never sets.
 */
export function fairShares(items: readonly BatchItem[], size: number): PrioritizedBatchItem[] {
  const share = Math.max(1, Math.floor(size / Math.max(1, items.length)));
  let left = size;
  const shares: PrioritizedBatchItem[] = [];
  for (const item of items) {
    const processAmount = Math.min(item.tokens.length, share, left);
    if (processAmount <= 0) break;
    shares.push({ item, processAmount });
    left -= processAmount;
  }
  const clipped = shares.filter((entry) => entry.processAmount < entry.item.tokens.length);
  // Each pass gives at least one token to the first clipped item, so this ends.
  while (left > 0 && clipped.length > 0) {
    const increase = Math.ceil(left / clipped.length);
    for (let index = 0; index < clipped.length && left > 0;) {
      const entry = clipped[index]!;
      const more = Math.min(entry.item.tokens.length - entry.processAmount, left, increase);
      entry.processAmount += more;
      left -= more;
      if (entry.processAmount === entry.item.tokens.length) clipped.splice(index, 1);
      else index += 1;
    }
  }
  return shares;
}
