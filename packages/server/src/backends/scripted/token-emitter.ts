/**
 * Turns planned blocks into stream parts one token at a time, honouring the output budget,
 * stop sequences, the thinking share of the budget, a per-token delay and the request's cancellation.
 */
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceError, type ContentBlock, type ContentBlockDelta, type StopReason } from '@mms/protocol';
import type { StreamPart } from '../../streaming/stream-part.js';
import type { Cancellation } from '../cancellation.js';
import type { PlannedBlock } from './script-file.js';
import { tokenize } from './tokenizer.js';

export interface EmitOptions {
  outputBudget: number;
  stopSequences: readonly string[];
  /** Thinking may use at most this share of the budget, so an answer always has room. */
  thinkingShare: number;
  tokenDelayMs: number;
  /** Throw after the first delta (fault `stream-error`). */
  failAfterFirstDelta: boolean;
  /**
   * Join a batch's consecutive token deltas of one block into one delta. For a reply that is
   * not streamed: its JSON is the same, with a few parts to pass on instead of one per token.
   * Token counts, the budget and stop sequences still work token by token.
   */
  joinDeltas: boolean;
  cancellation: Cancellation;
}

/** Spent tokens shared across the blocks of one step. */
interface Spend {
  used: number;
}

/**
 * Parts come in batches: with no token delay, a whole step is one batch, so a reply costs a
 * few awaits instead of a few per token; with a delay, each token is its own batch.
 */
export async function* emitBlocks(blocks: readonly PlannedBlock[], options: EmitOptions): AsyncGenerator<StreamPart[]> {
  let batch: StreamPart[] = [];
  try {
    for (const part of partsOf(blocks, options)) {
      if (options.tokenDelayMs > 0 && isTokenDelta(part)) {
        if (batch.length > 0) yield batch;
        batch = [];
        await sleep(options.tokenDelayMs, undefined, { signal: options.cancellation.signal });
      }
      if (!(options.joinDeltas && joinLastDelta(batch, part))) batch.push(part);
    }
  } catch (error) {
    // What was produced before a failure still reaches the client (fault stream-error).
    if (batch.length > 0) yield batch;
    throw error;
  }
  if (batch.length > 0) yield batch;
}

function isTokenDelta(part: StreamPart): boolean {
  return part.type === 'block-delta' && part.delta.type !== 'signature_delta';
}

/** Appends `part`'s delta to the batch's last part when both are deltas of the same kind. */
function joinLastDelta(batch: StreamPart[], part: StreamPart): boolean {
  const last = batch[batch.length - 1];
  if (part.type !== 'block-delta' || last?.type !== 'block-delta') return false;
  const joined = joinedDelta(last.delta, part.delta);
  if (joined === undefined) return false;
  batch[batch.length - 1] = { type: 'block-delta', delta: joined };
  return true;
}

function joinedDelta(first: ContentBlockDelta, second: ContentBlockDelta): ContentBlockDelta | undefined {
  if (first.type === 'text_delta' && second.type === 'text_delta') return { type: 'text_delta', text: first.text + second.text };
  if (first.type === 'thinking_delta' && second.type === 'thinking_delta') return { type: 'thinking_delta', thinking: first.thinking + second.thinking };
  if (first.type === 'input_json_delta' && second.type === 'input_json_delta') return { type: 'input_json_delta', partial_json: first.partial_json + second.partial_json };
  return undefined;
}

function* partsOf(blocks: readonly PlannedBlock[], options: EmitOptions): Generator<StreamPart> {
  const spend: Spend = { used: 0 };
  for (const block of blocks) {
    const { start, pieces, stopSequence } = prepare(block, options);
    if (start.type === 'text' && pieces.length === 0 && stopSequence !== null) {
      // A stop sequence at the very start leaves nothing to say: no empty text block.
      yield* finish(spend, 'stop_sequence', stopSequence, false);
      return;
    }
    yield { type: 'block-start', block: start };
    for (const delta of pieces) {
      if (spend.used >= options.outputBudget) {
        yield* finish(spend, 'max_tokens', null, true);
        return;
      }
      options.cancellation.throwIfAborted();
      spend.used += 1;
      yield { type: 'block-delta', delta };
      if (options.failAfterFirstDelta) throw new ServiceError('internal', 'Injected fault: stream-error');
    }
    if (start.type === 'thinking') yield { type: 'block-delta', delta: { type: 'signature_delta', signature: signatureOf(block) } };
    yield { type: 'block-stop' };
    // The count so far with every block's end: a turn that stops reading after one block (the
    // call disable_parallel_tool_use allows) still has the tokens that block took.
    yield { type: 'output-tokens', count: spend.used };
    if (stopSequence !== null) {
      yield* finish(spend, 'stop_sequence', stopSequence, false);
      return;
    }
  }
  const calledTool = blocks.some((block) => block.type === 'tool_use' || block.type === 'server_tool_use');
  yield* finish(spend, calledTool ? 'tool_use' : 'end_turn', null, false);
}

function* finish(spend: Spend, stopReason: StopReason, stopSequence: string | null, closeBlock: boolean): Generator<StreamPart> {
  if (closeBlock) yield { type: 'block-stop' };
  yield { type: 'output-tokens', count: spend.used };
  yield { type: 'finish', stopReason, stopSequence };
}

interface PreparedBlock {
  start: ContentBlock;
  pieces: ContentBlockDelta[];
  stopSequence: string | null;
}

function prepare(block: PlannedBlock, options: EmitOptions): PreparedBlock {
  switch (block.type) {
    case 'text': {
      const { text, stopSequence } = cutAtStopSequence(block.text, options.stopSequences);
      const pieces = tokenize(text).map((token): ContentBlockDelta => ({ type: 'text_delta', text: token }));
      return { start: { type: 'text', text: '', citations: null }, pieces, stopSequence };
    }
    case 'thinking': {
      const cap = Math.floor(options.outputBudget * options.thinkingShare);
      const pieces = tokenize(block.thinking).slice(0, cap).map((token): ContentBlockDelta => ({ type: 'thinking_delta', thinking: token }));
      return { start: { type: 'thinking', thinking: '', signature: '' }, pieces, stopSequence: null };
    }
    case 'tool_use':
    case 'server_tool_use': {
      const id = block.id ?? newToolId(block.type);
      const pieces = tokenize(JSON.stringify(block.input)).map((token): ContentBlockDelta => ({ type: 'input_json_delta', partial_json: token }));
      const start: ContentBlock = block.type === 'tool_use' ? { type: 'tool_use', id, name: block.name, input: {}, caller: { type: 'direct' } } : { type: 'server_tool_use', id, name: block.name, input: {} };
      return { start, pieces, stopSequence: null };
    }
    default:
      return block satisfies never;
  }
}

function cutAtStopSequence(text: string, stopSequences: readonly string[]): { text: string; stopSequence: string | null } {
  let cut: { at: number; sequence: string } | undefined;
  for (const sequence of stopSequences) {
    const at = text.indexOf(sequence);
    if (at >= 0 && (cut === undefined || at < cut.at)) cut = { at, sequence };
  }
  return cut ? { text: text.slice(0, cut.at), stopSequence: cut.sequence } : { text, stopSequence: null };
}

function signatureOf(block: PlannedBlock): string {
  if (block.type === 'thinking' && block.signature) return block.signature;
  const text = block.type === 'thinking' ? block.thinking : '';
  return createHash('sha256').update(`mms-scripted:${text}`).digest('base64');
}

function newToolId(type: 'tool_use' | 'server_tool_use'): string {
  return `${type === 'tool_use' ? 'toolu' : 'srvtoolu'}_${randomBytes(12).toString('base64url')}`;
}
