/**
 * Turns planned blocks into stream parts one token at a time, honouring the output budget,
 * stop sequences, the thinking share of the budget, a per-token delay and the request's cancellation.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceError, type ContentBlock, type ContentBlockDelta, type StopReason } from '@model-messages/protocol';
import type { StreamPart } from '../../streaming/stream-part.js';
import type { Cancellation } from '../cancellation.js';
import type { PlannedBlock } from './script-file.js';
import { countTokens, tokenize, tokenPrefix } from './tokenizer.js';

export interface EmitOptions {
  outputBudget: number;
  stopSequences: readonly string[];
  /** Output tokens thinking may take, so an answer always has room (call/thinking-budget.ts). */
  thinkingBudget: number;
  tokenDelayMs: number;
  /** Throw after the first delta (fault `stream-error`). */
  failAfterFirstDelta: boolean;
  /**
   * One delta per block, holding every token the budget allows, instead of one per token. For
   * a reply that is not streamed: its JSON is the same, with a few parts to pass on instead of
   * one per token. Token counts, the budget and stop sequences still work token by token.
   * Ignored with a token delay, which is per token.
   */
  joinDeltas: boolean;
  cancellation: Cancellation;
}

/**
 * Parts come in batches: with no token delay, a whole step is one batch, so a reply costs a
 * few awaits instead of a few per token; with a delay, each token is its own batch.
 */
export function emitBlocks(blocks: readonly PlannedBlock[], options: EmitOptions): AsyncIterable<StreamPart[]> {
  // The answer is fixed in advance, so its parts are made at once; only the delay is paced.
  // What was made before a failure (fault stream-error) still reaches the client, then the failure.
  const parts: StreamPart[] = [];
  let failure: unknown;
  try {
    pushParts(blocks, options, parts);
  } catch (error) {
    failure = error;
  }
  if (options.tokenDelayMs === 0) return new ReadyBatch(parts, failure);
  return pacedBatches(parts, failure, options);
}

/**
 * Parts in one batch at most. The parts after a batch are encoded and written before the next
 * is asked for, all on the event loop: a step of 131,072 tokens in one batch held it 0.9 s.
 */
export const LARGEST_BATCH = 4096;

/**
 * A step's parts as one batch (in pieces of LARGEST_BATCH, a turn of the event loop between
 * them), then the failure if there is one. Not an async generator: each layer of those costs a
 * reply about 300 ns and 1 KB, and a reply of one batch waits for nothing.
 */
class ReadyBatch implements AsyncIterableIterator<StreamPart[]> {
  /** Parts given so far. */
  private given = 0;

  constructor(
    private readonly parts: StreamPart[],
    private failure: unknown,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StreamPart[], undefined>> {
    if (this.given < this.parts.length) {
      const first = this.given === 0;
      const batch =
        first && this.parts.length <= LARGEST_BATCH
          ? this.parts
          : this.parts.slice(this.given, this.given + LARGEST_BATCH);
      this.given += batch.length;
      const result = { value: batch, done: false as const };
      return first ? Promise.resolve(result) : new Promise((resolve) => setImmediate(() => resolve(result)));
    }
    const failure = this.failure;
    if (failure === undefined) return this.return();
    this.failure = undefined;
    return Promise.reject(failure);
  }

  /** The reader stopped early: nothing more is given, the failure included. */
  return(): Promise<IteratorResult<StreamPart[], undefined>> {
    this.given = this.parts.length;
    this.failure = undefined;
    return Promise.resolve({ value: undefined, done: true });
  }
}

/**
 * Each token delta in a batch of its own, after a delay; other parts join the batch before it.
 * Then the failure, if there is one.
 */
async function* pacedBatches(
  parts: readonly StreamPart[],
  failure: unknown,
  options: EmitOptions,
): AsyncGenerator<StreamPart[]> {
  let batch: StreamPart[] = [];
  for (const part of parts) {
    if (isTokenDelta(part)) {
      if (batch.length > 0) yield batch;
      batch = [];
      await sleep(options.tokenDelayMs, undefined, { signal: options.cancellation.signal });
    }
    batch.push(part);
  }
  if (batch.length > 0) yield batch;
  if (failure !== undefined) throw failure;
}

function isTokenDelta(part: StreamPart): boolean {
  return part.type === 'block-delta' && part.delta.type !== 'signature_delta';
}

/** Appends the step's parts to `parts`; throws after the first delta for fault stream-error. */
function pushParts(blocks: readonly PlannedBlock[], options: EmitOptions, parts: StreamPart[]): void {
  options.cancellation.throwIfAborted();
  let used = 0;
  for (const block of blocks) {
    const { start, text, tokenCount, deltaKind, stopSequence } = prepare(block, options);
    if (start.type === 'text' && tokenCount === 0 && stopSequence !== null) {
      // A stop sequence at the very start leaves nothing to say: no empty text block.
      pushFinish(parts, used, 'stop_sequence', stopSequence);
      return;
    }
    parts.push({ type: 'block-start', block: start });
    // The tokens the budget leaves room for, as one delta or one delta each. A token delay
    // stays a delay per token, joined or not: a reply of N tokens takes N delays.
    const sent = Math.min(tokenCount, Math.max(0, options.outputBudget - used));
    for (const delta of deltaTexts(text, tokenCount, sent, options)) {
      parts.push({ type: 'block-delta', delta: deltaOf(deltaKind, delta) });
      if (options.failAfterFirstDelta) throw new ServiceError('internal', 'Injected fault: stream-error');
    }
    used += sent;
    if (sent < tokenCount) {
      parts.push({ type: 'block-stop' });
      pushFinish(parts, used, 'max_tokens', null);
      return;
    }
    // A script's signature is the engine's own, which the turn's step reader wraps in this service's.
    if (block.type === 'thinking' && block.signature)
      parts.push({ type: 'block-delta', delta: { type: 'signature_delta', signature: block.signature } });
    parts.push({ type: 'block-stop' });
    // The count so far with every block's end: a turn that stops reading after one block (the
    // call disable_parallel_tool_use allows) still has the tokens that block took.
    parts.push({ type: 'output-tokens', count: used });
    if (stopSequence !== null) {
      pushFinish(parts, used, 'stop_sequence', stopSequence);
      return;
    }
  }
  pushFinish(parts, used, blocks.some(isCall) ? 'tool_use' : 'end_turn', null);
}

/**
 * The texts of a block's deltas: its first `sent` tokens, one delta each, or all in one delta
 * when joined. A joined block that fits its budget is its own text: no tokens to make or join.
 */
function deltaTexts(text: string, tokenCount: number, sent: number, options: EmitOptions): string[] {
  if (!options.joinDeltas || options.tokenDelayMs > 0) return tokenize(text).slice(0, sent);
  if (sent === 0) return [];
  return [sent === tokenCount ? text : tokenPrefix(text, sent)];
}

function isCall(block: PlannedBlock): boolean {
  return block.type === 'tool_use' || block.type === 'server_tool_use';
}

function pushFinish(parts: StreamPart[], used: number, stopReason: StopReason, stopSequence: string | null): void {
  parts.push({ type: 'output-tokens', count: used }, { type: 'finish', stopReason, stopSequence });
}

type DeltaKind = 'text_delta' | 'thinking_delta' | 'input_json_delta';

interface PreparedBlock {
  start: ContentBlock;
  /** What the block says, if the budget allows, in `tokenCount` tokens. */
  text: string;
  tokenCount: number;
  deltaKind: DeltaKind;
  stopSequence: string | null;
}

function deltaOf(kind: DeltaKind, text: string): ContentBlockDelta {
  if (kind === 'text_delta') return { type: 'text_delta', text };
  if (kind === 'thinking_delta') return { type: 'thinking_delta', thinking: text };
  return { type: 'input_json_delta', partial_json: text };
}

function prepare(block: PlannedBlock, options: EmitOptions): PreparedBlock {
  switch (block.type) {
    case 'text': {
      const { text, stopSequence } = cutAtStopSequence(block.text, options.stopSequences);
      return {
        start: { type: 'text', text: '', citations: null },
        text,
        tokenCount: countTokens(text),
        deltaKind: 'text_delta',
        stopSequence,
      };
    }
    case 'thinking': {
      const cap = options.thinkingBudget;
      const tokenCount = countTokens(block.thinking);
      const text = tokenCount > cap ? tokenPrefix(block.thinking, cap) : block.thinking;
      return {
        start: { type: 'thinking', thinking: '', signature: '' },
        text,
        tokenCount: Math.min(tokenCount, cap),
        deltaKind: 'thinking_delta',
        stopSequence: null,
      };
    }
    case 'tool_use':
    case 'server_tool_use': {
      const id = block.id ?? newToolId(block.type);
      const text = JSON.stringify(block.input);
      const start: ContentBlock =
        block.type === 'tool_use'
          ? { type: 'tool_use', id, name: block.name, input: {}, caller: { type: 'direct' } }
          : { type: 'server_tool_use', id, name: block.name, input: {} };
      return { start, text, tokenCount: countTokens(text), deltaKind: 'input_json_delta', stopSequence: null };
    }
    default:
      return block satisfies never;
  }
}

function cutAtStopSequence(
  text: string,
  stopSequences: readonly string[],
): { text: string; stopSequence: string | null } {
  let cut: { at: number; sequence: string } | undefined;
  for (const sequence of stopSequences) {
    const at = text.indexOf(sequence);
    if (at >= 0 && (cut === undefined || at < cut.at)) cut = { at, sequence };
  }
  return cut ? { text: text.slice(0, cut.at), stopSequence: cut.sequence } : { text, stopSequence: null };
}

function newToolId(type: 'tool_use' | 'server_tool_use'): string {
  return `${type === 'tool_use' ? 'toolu' : 'srvtoolu'}_${randomBytes(12).toString('base64url')}`;
}
