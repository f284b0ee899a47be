/**
 * Folds block starts, deltas and stops into finished content blocks. Used by the agent loop
 * (to continue a turn after server tools) and by the message fold (the JSON reply), so both
 * read the stream the same way.
 */
import type { ContentBlock, ContentBlockDelta } from '@mms/protocol';
import { parsePartialJsonObject } from './partial-json.js';

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
    else if (delta.type === 'input_json_delta' && (block.type === 'tool_use' || block.type === 'server_tool_use')) this.inputJson += delta.partial_json;
    else throw new Error(`${delta.type} does not fit a ${block.type} block`);
  }

  /** Closes the open block and returns it. */
  stop(): ContentBlock {
    const block = this.open;
    if (!block) throw new Error('block-stop with no open block');
    if ((block.type === 'tool_use' || block.type === 'server_tool_use') && this.inputJson !== '') {
      block.input = parseInput(this.inputJson);
    }
    this.blocks.push(block);
    this.open = undefined;
    return block;
  }

  get isOpen(): boolean {
    return this.open !== undefined;
  }

  get openBlockType(): ContentBlock['type'] | undefined {
    return this.open?.type;
  }
}

function parseInput(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Cut off by the output budget: keep what arrived (see partial-json.ts).
  }
  return parsePartialJsonObject(json);
}
