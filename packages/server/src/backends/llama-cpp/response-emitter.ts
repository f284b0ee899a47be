/**
 * Turns node-llama-cpp's response chunks into stream parts: thought chunks into a thinking block
 * (the turn's step reader signs it), main text into a text block or, for a forced tool, into a tool_use
 * block's input_json_delta. Counts output tokens as they come.
 */
import type { LlamaChatResponseChunk } from 'node-llama-cpp';
import type { StreamPart } from '../../streaming/stream-part.js';
import type { OfferedTool } from '../call/model-call.js';
import { toolCallBlock } from '../call/tool-calls.js';

/**
 * The main output: prose, a forced tool's input streamed as it is generated, or the JSON envelope
 * of a call among several tools, which is held until it names its tool (generate-response.ts).
 */
export type MainOutput = { kind: 'text' } | { kind: 'tool'; tool: OfferedTool } | { kind: 'envelope' };

export class ResponseEmitter {
  private open: 'thinking' | 'main' | undefined;
  /**
   * Whitespace that would open a text block, held until text follows: a chat format's own
   * separator (Qwen writes `</think>\n\n<tool_call>`) is no text block of the answer.
   */
  private heldSpace = '';
  outputTokens = 0;

  constructor(
    private readonly push: (part: StreamPart) => void,
    private readonly main: MainOutput,
  ) {}

  chunk(chunk: LlamaChatResponseChunk): void {
    this.outputTokens += chunk.tokens.length;
    if (chunk.text === '') return;
    if (chunk.type === 'segment') {
      // Comments and other segment kinds are thinking too, as far as the wire is concerned.
      this.switchTo('thinking');
      this.push({ type: 'block-delta', delta: { type: 'thinking_delta', thinking: chunk.text } });
      return;
    }
    // The envelope becomes a call once it is whole (generate-response.ts); nothing of it is streamed.
    if (this.main.kind === 'envelope') return;
    if (this.main.kind === 'text' && this.open !== 'main' && chunk.text.trim() === '') {
      this.heldSpace += chunk.text;
      return;
    }
    this.switchTo('main');
    const text = this.heldSpace + chunk.text;
    this.heldSpace = '';
    const delta =
      this.main.kind === 'tool'
        ? ({ type: 'input_json_delta', partial_json: text } as const)
        : ({ type: 'text_delta', text } as const);
    this.push({ type: 'block-delta', delta });
  }

  /** Adds a whole block (a tool call parsed after generation). */
  toolCall(tool: OfferedTool, input: Record<string, unknown>): void {
    this.close();
    this.push({ type: 'block-start', block: toolCallBlock(tool) });
    this.push({ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } });
    this.push({ type: 'block-stop' });
  }

  /** A forced tool call whose model output was empty still needs its block. */
  ensureMainBlock(): void {
    if (this.open !== 'main') this.switchTo('main');
  }

  /** Ends the open block; whitespace still held was a separator, not text, and is dropped. */
  close(): void {
    if (this.open) this.push({ type: 'block-stop' });
    this.open = undefined;
    this.heldSpace = '';
  }

  private switchTo(kind: 'thinking' | 'main'): void {
    if (this.open === kind) return;
    const held = this.heldSpace;
    this.close();
    this.heldSpace = kind === 'main' ? held : '';
    this.open = kind;
    if (kind === 'thinking') {
      this.push({ type: 'block-start', block: { type: 'thinking', thinking: '', signature: '' } });
    } else if (this.main.kind === 'tool') {
      this.push({ type: 'block-start', block: toolCallBlock(this.main.tool) });
    } else {
      this.push({ type: 'block-start', block: { type: 'text', text: '', citations: null } });
    }
  }
}
