/**
 * Folds block starts, deltas and stops into finished content blocks. Used by the agent loop
 * (to continue a turn after server tools) and by the message fold (the JSON reply), so both
 * read the stream the same way.
 */
import type { ContentBlock, ContentBlockDelta } from '@model-messages/protocol';
import { parsePartialJsonObject } from './partial-json.js';

/** A block as it closed, with what the wire block cannot say of itself. */
export interface StoppedBlock {
  block: ContentBlock;
  /**
   * A tool call whose input JSON arrived incomplete (the output budget or a stop sequence ended
   * it mid-way): its input is the partial parse of what arrived (partial-json.ts), a guess.
   */
  inputCut: boolean;
  /**
   * A tool call that closed with no input JSON at all: its input is `{}`. Whole when the engine
   * streams nothing for a call without arguments; cut when the output budget ran out right after
   * the block opened. Only the step's finish tells which (agent/run-turn.ts).
   */
  inputMissing: boolean;
}

export class BlockAssembler {
  readonly blocks: ContentBlock[] = [];
  private open: ContentBlock | undefined;
  private inputJson = '';

  start(block: ContentBlock): void {
    if (this.open) throw new Error(`block-start while a ${this.open.type} block is open`);
    // A shallow copy: only text, thinking and signature strings are appended to, and input is replaced.
    this.open = { ...block };
    this.inputJson = '';
  }

  delta(delta: ContentBlockDelta): void {
    const block = this.open;
    if (!block) throw new Error(`${delta.type} outside a block`);
    if (delta.type === 'text_delta' && block.type === 'text') block.text += delta.text;
    else if (delta.type === 'thinking_delta' && block.type === 'thinking') block.thinking += delta.thinking;
    else if (delta.type === 'signature_delta' && block.type === 'thinking') block.signature += delta.signature;
    else if (delta.type === 'input_json_delta' && (block.type === 'tool_use' || block.type === 'server_tool_use'))
      this.inputJson += delta.partial_json;
    // A compaction's summary comes whole in one delta, as the public stream sends it (issue 34).
    else if (delta.type === 'compaction_delta' && block.type === 'compaction') block.content = delta.content;
    else throw new Error(`${delta.type} does not fit a ${block.type} block`);
  }

  /** Closes the open block and returns it. */
  stop(): StoppedBlock {
    const block = this.open;
    if (!block) throw new Error('block-stop with no open block');
    let inputCut = false;
    const isCall = block.type === 'tool_use' || block.type === 'server_tool_use';
    if (isCall && this.inputJson !== '') {
      const parsed = parseInput(this.inputJson);
      block.input = parsed.input;
      inputCut = !parsed.whole;
    }
    this.blocks.push(block);
    this.open = undefined;
    return { block, inputCut, inputMissing: isCall && this.inputJson === '' };
  }

  get isOpen(): boolean {
    return this.open !== undefined;
  }

  get openBlockType(): ContentBlock['type'] | undefined {
    return this.open?.type;
  }
}

function parseInput(json: string): { input: Record<string, unknown>; whole: boolean } {
  try {
    const value: unknown = JSON.parse(json);
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return { input: value as Record<string, unknown>, whole: true };
  } catch {
    // Cut off by the output budget: keep what arrived (see partial-json.ts).
  }
  return { input: parsePartialJsonObject(json), whole: false };
}
