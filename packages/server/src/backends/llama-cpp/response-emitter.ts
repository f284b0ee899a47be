/**
 * Turns node-llama-cpp's response chunks into stream parts: thought chunks into a thinking block
 * (the turn's step reader signs it), main text into a text block or, for a forced tool, into a tool_use
 * block's input_json_delta; the envelope of one call among several tools into that tool's
 * tool_use block once its name is known, and the calls the model opens in its chat format as
 * their input is generated (call-input.ts). Counts output tokens as they come.
 */
import type { LlamaChatResponseChunk } from 'node-llama-cpp';
import type { StreamPart, ToolCallOutcome } from '../../streaming/stream-part.js';
import type { OfferedTool } from '../call/model-call.js';
import { toolCallBlock } from '../call/tool-calls.js';
import { ToolEnvelopeReader } from '../call/tool-envelope-reader.js';

/** The main output: prose, a forced tool's input streamed as it is generated, or the JSON envelope of a call among `tools`. */
export type MainOutput =
  { kind: 'text' } | { kind: 'tool'; tool: OfferedTool } | { kind: 'envelope'; tools: readonly OfferedTool[] };

/** The call the envelope named, and how much of its input came (all of it unless max_tokens cut it). */
export interface EnvelopeCall {
  tool: OfferedTool;
  inputJson: string;
  /** Its block was opened and its input streamed as it came. */
  streamed: boolean;
}

export class ResponseEmitter {
  private open: 'thinking' | 'main' | 'call' | undefined;
  /**
   * Whitespace that would open a text block, held until text follows: a chat format's own
   * separator (Qwen writes `</think>\n\n<tool_call>`) is no text block of the answer.
   */
  private heldSpace = '';
  private readonly envelope: ToolEnvelopeReader | undefined;
  private envelopeStreamed = false;
  outputTokens = 0;

  constructor(
    private readonly push: (part: StreamPart) => void,
    private readonly main: MainOutput,
    /**
     * The envelope's input streams once its name is known: under the envelope schema's own
     * grammar it is valid by construction, so it needs no check before the caller sees it. Under
     * a grammar of its shape only it may fail its tool's schema and be generated again, so it is
     * held whole until checked (generate-response.ts).
     */
    private readonly streamEnvelope = false,
  ) {
    if (main.kind === 'envelope') this.envelope = new ToolEnvelopeReader();
  }

  chunk(chunk: LlamaChatResponseChunk): void {
    this.countTokens(chunk);
    if (chunk.text === '') return;
    if (chunk.type === 'segment') {
      // Comments and other segment kinds are thinking too, as far as the wire is concerned.
      this.switchTo('thinking');
      this.push({ type: 'block-delta', delta: { type: 'thinking_delta', thinking: chunk.text } });
      return;
    }
    if (this.main.kind === 'envelope') {
      this.envelopeText(chunk.text);
      return;
    }
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

  /** Counts a chunk's tokens, whatever its text goes to. */
  countTokens(chunk: LlamaChatResponseChunk): void {
    this.outputTokens += chunk.tokens.length;
  }

  /** Opens the tool_use block of a call whose input streams as it comes (`inputDelta`). */
  startCall(tool: OfferedTool): void {
    this.close();
    this.open = 'call';
    this.push({ type: 'block-start', block: toolCallBlock(tool) });
  }

  inputDelta(json: string): void {
    if (json !== '') this.push({ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: json } });
  }

  /**
   * Adds a whole block (a call checked after generation, or one held and cut by max_tokens, as it
   * came, with no outcome: it was not checked).
   */
  toolCall(tool: OfferedTool, inputJson: string, outcome?: ToolCallOutcome): void {
    this.startCall(tool);
    this.inputDelta(inputJson);
    if (outcome) this.outcome(outcome);
    this.close();
  }

  /** How the call being written became its block: before its block-stop, or before the error that fails it. */
  outcome(outcome: ToolCallOutcome): void {
    this.push({ type: 'tool-call-outcome', outcome });
  }

  /** The envelope's call, once its name is known and offered. */
  envelopeCall(): EnvelopeCall | undefined {
    const name = this.envelope?.name;
    const tool = this.main.kind === 'envelope' ? this.main.tools.find((offered) => offered.name === name) : undefined;
    if (!tool) return undefined;
    return { tool, inputJson: this.envelope!.inputText, streamed: this.envelopeStreamed };
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

  private envelopeText(text: string): void {
    const input = this.envelope!.push(text);
    if (!this.streamEnvelope) return;
    if (!this.envelopeStreamed) {
      // A name that was not offered is refused once the envelope is whole (generate-response.ts).
      const call = this.envelopeCall();
      if (!call) return;
      this.startCall(call.tool);
      this.envelopeStreamed = true;
    }
    this.inputDelta(input);
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
