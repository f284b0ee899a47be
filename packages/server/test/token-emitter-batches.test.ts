/**
 * A long scripted step comes in batches of at most LARGEST_BATCH parts, with a turn of the event
 * loop between them, so that encoding and writing one never holds the loop for the whole step
 * (131,072 tokens in one batch held it 0.9 s); a short step is still one batch.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cancellation } from '../src/backends/cancellation.js';
import { emitBlocks, LARGEST_BATCH, type EmitOptions } from '../src/backends/scripted/token-emitter.js';
import type { StreamPart } from '../src/streaming/stream-part.js';

const options = (outputBudget: number): EmitOptions => ({
  outputBudget,
  stopSequences: [],
  thinkingBudget: Math.floor(outputBudget / 2),
  tokenDelayMs: 0,
  failAfterFirstDelta: false,
  joinDeltas: false,
  cancellation: new Cancellation(),
});

async function batchesOf(text: string, outputBudget: number): Promise<StreamPart[][]> {
  const batches: StreamPart[][] = [];
  for await (const batch of emitBlocks([{ type: 'text', text }], options(outputBudget))) batches.push(batch);
  return batches;
}

function textOf(batches: StreamPart[][]): string {
  return batches
    .flat()
    .map((part) => (part.type === 'block-delta' && part.delta.type === 'text_delta' ? part.delta.text : ''))
    .join('');
}

test('a step of many tokens comes in batches of at most LARGEST_BATCH parts, nothing lost', async () => {
  const text = 'word '.repeat(3 * LARGEST_BATCH);
  const batches = await batchesOf(text, 4 * LARGEST_BATCH);
  assert.ok(batches.length >= 3, `${batches.length} batches`);
  assert.ok(batches.every((batch) => batch.length <= LARGEST_BATCH));
  assert.equal(textOf(batches), text);
});

test('a short step is one batch', async () => {
  const batches = await batchesOf('a short answer', 100);
  assert.equal(batches.length, 1);
  assert.equal(textOf(batches), 'a short answer');
});
