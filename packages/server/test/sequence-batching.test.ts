// Decode batches of concurrent generations (sequence-batching.ts): the strategy alone against a
// stand-in queue, then real llama.cpp batches of four generations on the tiny model, read from the
// context's native calls. Both read node-llama-cpp internals (`_queuedDecodes`, `_ctx`): a version
// that changes them fails here, where the service itself would quietly fall back to its order.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LlamaChat,
  resolveChatWrapper,
  type BatchItem,
  type LlamaContext,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp';
import { tinyLlamaModel } from '@model-messages/testing';
import { llamaRuntime } from '../src/backends/llama-cpp/llama-runtime.js';
import {
  createBatchedContext,
  fairShares,
  HOLD_LIMIT,
  LOCK_YIELD_MS,
  sequenceBatching,
} from '../src/backends/llama-cpp/sequence-batching.js';

/** A queue entry as node-llama-cpp keeps it, and the item it builds from it. */
function queued(sequenceId: number, tokens: number, logits: 'last' | 'none' = 'last') {
  const tokenList = Array.from({ length: tokens }, (_, index) => (index + 1) as Token);
  const logitList = tokenList.map((_, index) => (logits === 'last' && index === tokens - 1 ? true : undefined));
  const item: BatchItem = { tokens: tokenList, logits: logitList, evaluationPriority: 5 };
  return { entry: { sequenceId, tokens: tokenList, logits: logitList }, item };
}

type QueuedEntry = ReturnType<typeof queued>['entry'];

/** A strategy attached to a stand-in context whose queue is `entries`. */
function strategyOver(entries: ReturnType<typeof queued>[]) {
  const batching = sequenceBatching();
  const stand = { _queuedDecodes: entries.map(({ entry }) => entry) };
  batching.attach(stand as unknown as LlamaContext);
  return {
    form: (size = 512) => batching.strategy({ items: entries.map(({ item }) => item), size }),
    /** Replaces the queue, as the next pass of the dispatch loop would see it. */
    requeue(next: ReturnType<typeof queued>[]) {
      entries.splice(0, entries.length, ...next);
      stand._queuedDecodes = next.map(({ entry }) => entry);
    },
  };
}

const sequenceOf = (entries: ReturnType<typeof queued>[], item: BatchItem) =>
  entries.find((entry) => entry.item === item)?.entry.sequenceId;

describe('the batching strategy', () => {
  test('orders items by sequence id, whatever order they were queued in', () => {
    const entries = [queued(2, 1), queued(0, 1), queued(3, 1), queued(1, 1)];
    const { form } = strategyOver(entries);
    const batch = form();
    assert.deepEqual(
      batch.map(({ item }) => sequenceOf(entries, item)),
      [0, 1, 2, 3],
    );
    assert.ok(batch.every(({ processAmount }) => processAmount === 1));
  });

  test('holds the batch until every sequence that generated last time has queued again', () => {
    const entries = [queued(0, 1), queued(1, 1), queued(2, 1)];
    const strategy = strategyOver(entries);
    assert.equal(strategy.form().length, 3);
    // Sequence 1 has not queued its next token yet: nothing is decoded, the loop asks again.
    strategy.requeue([queued(2, 1), queued(0, 1)]);
    assert.deepEqual(strategy.form(), []);
    assert.deepEqual(strategy.form(), []);
    strategy.requeue([queued(2, 1), queued(0, 1), queued(1, 1)]);
    assert.deepEqual(
      strategy.form().map(({ item }) => sequenceOf(entries, item)),
      [0, 1, 2],
    );
  });

  test('a sequence that stops generating is waited for at most HOLD_LIMIT times', () => {
    const strategy = strategyOver([queued(0, 1), queued(1, 1)]);
    strategy.form();
    strategy.requeue([queued(0, 1)]);
    for (let hold = 0; hold < HOLD_LIMIT; hold++) assert.deepEqual(strategy.form(), [], `hold ${hold + 1}`);
    assert.equal(strategy.form().length, 1);
    // Sequence 1 left the set with that batch: sequence 0 alone goes at once from now on.
    strategy.requeue([queued(0, 1)]);
    assert.equal(strategy.form().length, 1);
  });

  test('a prompt evaluated without logits is not waited for; its last chunk, with a logit, is', () => {
    const prompt = queued(1, 300);
    const strategy = strategyOver([queued(0, 1), prompt]);
    const first = strategy.form(256);
    // Both get a share; the prompt's chunk carries no logit, so only sequence 0 counts as generating.
    assert.deepEqual(
      first.map(({ processAmount }) => processAmount),
      [1, 255],
    );
    strategy.requeue([queued(1, 45)]);
    assert.deepEqual(strategy.form(), []);
    strategy.requeue([queued(1, 45), queued(0, 1)]);
    assert.equal(strategy.form().length, 2);
    strategy.requeue([queued(0, 1)]);
    assert.deepEqual(strategy.form(), [], 'sequence 1 sampled in that batch and is waited for');
  });

  test('where the queue does not match the items, it keeps their order and never holds', () => {
    const entries = [queued(1, 1), queued(0, 1)];
    const batching = sequenceBatching();
    // Another node-llama-cpp version: no such queue, or one whose token arrays are not the items'.
    for (const stand of [{}, { _queuedDecodes: [queued(1, 1).entry, queued(0, 1).entry] }]) {
      batching.attach(stand as unknown as LlamaContext);
      for (let pass = 0; pass < 3; pass++) {
        const batch = batching.strategy({ items: entries.map(({ item }) => item), size: 512 });
        assert.deepEqual(
          batch.map(({ item }) => sequenceOf(entries, item)),
          [1, 0],
        );
      }
    }
  });

  test('every LOCK_YIELD_MS the queue is taken out, so the loop ends and lets go of the lock, then put back', async () => {
    let clock = 0;
    const batching = sequenceBatching(() => clock);
    const entries = [queued(1, 1), queued(0, 1)];
    let dispatches = 0;
    const stand: {
      _queuedDecodes: QueuedEntry[];
      _queuedDecodeSequenceIds: Set<number>;
      dispatchPendingBatch(): void;
    } = {
      _queuedDecodes: entries.map(({ entry }) => entry),
      _queuedDecodeSequenceIds: new Set([1, 0]),
      dispatchPendingBatch: () => (dispatches += 1),
    };
    batching.attach(stand as unknown as LlamaContext);
    assert.equal(
      batching.strategy({ items: entries.map(({ item }) => item), size: 512 }).length,
      2,
      'within the interval: a batch',
    );
    clock = LOCK_YIELD_MS;
    assert.deepEqual(batching.strategy({ items: entries.map(({ item }) => item), size: 512 }), []);
    assert.equal(stand._queuedDecodes.length, 0, 'the queue is empty: the dispatch loop ends');
    assert.equal(stand._queuedDecodeSequenceIds.size, 0);
    // A token queued before the loop ends joins the others aside.
    const late = queued(2, 1);
    stand._queuedDecodes.push(late.entry);
    stand._queuedDecodeSequenceIds.add(2);
    assert.deepEqual(batching.strategy({ items: [late.item], size: 512 }), []);
    assert.equal(dispatches, 0);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      stand._queuedDecodes.map((entry) => entry.sequenceId),
      [1, 0, 2],
      'back in their order',
    );
    assert.deepEqual([...stand._queuedDecodeSequenceIds], [1, 0, 2]);
    assert.equal(dispatches, 1, 'and a dispatch asked for, behind whoever waited for the lock');
  });

  test('fair shares split the batch evenly, then give what is left to the clipped items', () => {
    const items = [queued(0, 10).item, queued(1, 500).item, queued(2, 500).item];
    assert.deepEqual(
      fairShares(items, 512).map(({ processAmount }) => processAmount),
      [10, 251, 251],
    );
    assert.deepEqual(
      fairShares([queued(0, 3).item], 512).map(({ processAmount }) => processAmount),
      [3],
    );
    assert.equal(fairShares(items, 2).length, 2, 'a batch smaller than the items takes one token of each it can');
  });
});

describe('batches of four generations on llama.cpp', () => {
  let model: LlamaModel;

  before(async () => {
    model = await (await llamaRuntime('none')).loadModel({ modelPath: await tinyLlamaModel() });
  });

  after(async () => {
    await model?.dispose();
  });

  test('while two sequences generate without pause, a third gets the context lock', async () => {
    const context = await createBatchedContext(model, { contextSize: 2048, sequences: 3, threads: 1 });
    try {
      const [first, second, third] = [context.getSequence(), context.getSequence(), context.getSequence()];
      await third.evaluateWithoutGeneratingNewTokens(model.tokenize('something held'));
      let stop = false;
      let generated = 0;
      // Each generates until told to stop, or 1,500 tokens (a bound only if the lock never came).
      const generate = async (sequence: typeof first, text: string) => {
        for await (const token of sequence.evaluate(model.tokenize(text), { temperature: 0 })) {
          void token;
          generated += 1;
          if (stop || sequence.nextTokenIndex >= 1_500) break;
        }
        return sequence.nextTokenIndex;
      };
      const generations = [generate(first, 'The sea at dawn'), generate(second, 'A storm at night')];
      while (generated < 20) await new Promise((resolve) => setImmediate(resolve));
      // clearHistory takes the context lock, as a new request's first step does.
      await third.clearHistory();
      const whileRunning = generated;
      stop = true;
      const lengths = await Promise.all(generations);
      assert.equal(third.nextTokenIndex, 0);
      assert.ok(
        lengths.every((length) => length < 1_500),
        `the lock came while both generated (after ${whileRunning} tokens), not when they ended: ${lengths}`,
      );
    } finally {
      await context.dispose();
    }
  });

  test('every decode holds all four generating sequences, in sequence order', async () => {
    const context = await createBatchedContext(model, { contextSize: 512, sequences: 4, threads: 1 });
    // What node-llama-cpp hands llama.cpp: the sequence of each addToBatch call, per decodeBatch.
    const batches: number[][] = [];
    let current: number[] = [];
    const internal = context as unknown as { _ctx: Record<string | symbol, unknown> };
    const native = internal._ctx;
    internal._ctx = new Proxy(native, {
      get(target, property) {
        const value = target[property];
        if (typeof value !== 'function') return value;
        if (property === 'addToBatch')
          return (sequenceId: number, ...rest: unknown[]) => {
            current.push(sequenceId);
            return (value as (...args: unknown[]) => unknown).call(target, sequenceId, ...rest);
          };
        if (property === 'decodeBatch')
          return () => {
            batches.push(current);
            current = [];
            return (value as () => unknown).call(target);
          };
        return (value as (...args: unknown[]) => unknown).bind(target);
      },
    });
    try {
      const chatWrapper = resolveChatWrapper(model);
      const sequences = Array.from({ length: 4 }, () => context.getSequence());
      const lengths = await Promise.all(
        sequences.map(async (contextSequence) => {
          const chat = new LlamaChat({ contextSequence, chatWrapper, autoDisposeSequence: false });
          try {
            const before = contextSequence.tokenMeter.usedOutputTokens;
            await chat.generateResponse(
              [
                { type: 'user', text: 'Tell me about the sea.' },
                { type: 'model', response: [] },
              ],
              { maxTokens: 24, temperature: 0 },
            );
            return contextSequence.tokenMeter.usedOutputTokens - before;
          } finally {
            chat.dispose();
          }
        }),
      );
      // The same prompt, greedy: the four generate alike and end together.
      assert.ok(
        lengths.every((length) => length === lengths[0] && length > 4),
        `tokens generated: ${lengths}`,
      );
      assert.ok(batches.length >= lengths[0]!, `${batches.length} decodes`);
      for (const [index, batch] of batches.entries())
        assert.deepEqual(batch, [0, 1, 2, 3], `decode ${index + 1} of ${batches.length}: ${JSON.stringify(batches)}`);
    } finally {
      internal._ctx = native;
      await context.dispose();
    }
  });
});
