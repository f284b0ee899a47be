/**
 * Engine chunks in, stream parts out, as they come: reasoning deltas into a thinking block
 * (the turn's step reader signs it), text deltas into a text block, tool-call
 * argument deltas into tool_use (or, for a server tool, server_tool_use) blocks as
 * input_json_delta. A whole `chat.completion` is read the same way, as one big delta. Pure:
 * no I/O; the backend feeds it.
 *
 * Some output must be checked by mms before the caller sees it (a strict tool's input the
 * engine did not guide, an `output_config.format` answer it could not guide): from the first
 * such block on, parts are held, in order, and the backend releases them after the check. A call
 * the engine guided streams as it comes, and is checked once it is whole (`calls`).
 */
import type { StreamPart } from '../../streaming/stream-part.js';
import type { ChatChoice, ChatCompletionChunk, ChatDelta, ChatToolCallDelta } from './chat-types.js';
import { streamError } from './error-mapping.js';
import type { OfferedTool } from '../call/model-call.js';
import { notOfferedError, toolCallBlock } from '../call/tool-calls.js';
import { ToolEnvelopeReader } from '../call/tool-envelope-reader.js';
import { plannedTool, type ChatPlan } from './output-plan.js';
import { StopSequenceMatcher } from './stop-sequence-matcher.js';

/** A tool call whose input mms must check before it is released as a block. */
export interface PendingCall {
  type: 'pending-call';
  name: string;
  tool: OfferedTool | undefined;
  arguments: string;
}

export type HeldItem = StreamPart | PendingCall;

export interface CallRecord {
  name: string;
  /** Its input JSON as generated. */
  arguments: string;
  /** Held for the check before release; otherwise streamed as it came (the engine guided it). */
  held: boolean;
}

export interface ConverterOptions {
  engine: string;
  plan: ChatPlan;
  thinks: boolean;
  /** Matched in mms (engines that do not report the stop string); empty: none. */
  stopSequences: readonly string[];
}

export interface ChunkSummary {
  /** Parts still to send before the held ones (the closing of the last streamed block). */
  tail: StreamPart[];
  held: HeldItem[];
  finishReason: string | undefined;
  /** The stop string that ended the output, mms-matched or engine-reported. */
  stopString: string | undefined;
  /** Every tool call, with its arguments as generated. */
  calls: CallRecord[];
  /** The whole text answer (for the format check). */
  text: string;
  completionTokens: number | undefined;
  /** The engine's own count of the prompt (usage.prompt_tokens), where it sent one. */
  promptTokens: number | undefined;
  /** Of those, the tokens its prefix cache held (usage.prompt_tokens_details.cached_tokens). */
  cachedTokens: number | undefined;
  /** Chunks that carried output: a token estimate where the engine sent no usage. */
  outputChunks: number;
}

type OpenBlock =
  | { kind: 'thinking' }
  | { kind: 'text' }
  | { kind: 'call'; index: number; id: string | undefined; pending: PendingCall | undefined };

export class ChunkConverter {
  private out: StreamPart[] = [];
  private held: HeldItem[] | undefined;
  private open: OpenBlock | undefined;
  private text = '';
  /** `{"name", "input"}` of one call among several tools, as the engine writes it in its content. */
  private readonly envelope = new ToolEnvelopeReader();
  private envelopeText = '';
  /** The envelope's call streams: its name is known, and the engine guides it (output-plan.ts). */
  private envelopeStreamed = false;
  private calls: CallRecord[] = [];
  private finishReason: string | undefined;
  private reportedStop: string | number | undefined;
  private completionTokens: number | undefined;
  private promptTokens: number | undefined;
  private cachedTokens: number | undefined;
  private outputChunks = 0;
  private readonly matcher: StopSequenceMatcher | undefined;

  constructor(private readonly options: ConverterOptions) {
    this.matcher =
      options.stopSequences.length > 0 && options.plan.content.kind === 'text'
        ? new StopSequenceMatcher(options.stopSequences)
        : undefined;
    if (options.plan.holdAll) this.held = [];
  }

  /** A stop sequence was matched in mms: the rest of the engine's output is not wanted. */
  get stopped(): boolean {
    return this.matcher?.matched !== undefined;
  }

  /** The parts that can go to the client now. */
  push(chunk: ChatCompletionChunk): StreamPart[] {
    if (chunk.error !== undefined || chunk.object === 'error') throw streamError(this.options.engine, chunk);
    if (chunk.usage?.completion_tokens !== undefined) this.completionTokens = chunk.usage.completion_tokens;
    if (typeof chunk.usage?.prompt_tokens === 'number') this.promptTokens = chunk.usage.prompt_tokens;
    const cached = chunk.usage?.prompt_tokens_details?.cached_tokens;
    if (typeof cached === 'number') this.cachedTokens = cached;
    const choice = chunk.choices?.[0];
    if (choice && !this.stopped) this.choice(choice);
    const parts = this.out;
    this.out = [];
    return parts;
  }

  end(): ChunkSummary {
    if (this.matcher && !this.stopped) this.appendText(this.matcher.flush());
    this.close();
    if (this.options.plan.content.kind === 'tool-envelope' && !this.envelopeStreamed) this.releaseEnvelope();
    const reported = typeof this.reportedStop === 'string' ? this.reportedStop : undefined;
    return {
      tail: this.out,
      held: this.held ?? [],
      finishReason: this.finishReason,
      stopString: this.matcher?.matched ?? (this.finishReason === 'stop' ? reported : undefined),
      calls: this.calls,
      text: this.text,
      completionTokens: this.completionTokens,
      promptTokens: this.promptTokens,
      cachedTokens: this.cachedTokens,
      outputChunks: this.outputChunks,
    };
  }

  private choice(choice: ChatChoice): void {
    const delta = choice.delta ?? choice.message;
    if (delta) this.delta(delta, choice.message !== undefined);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    const reported = choice.stop_reason ?? choice.matched_stop;
    if (reported !== undefined && reported !== null) this.reportedStop = reported;
  }

  private delta(delta: ChatDelta, whole: boolean): void {
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    const content = delta.content;
    const calls = delta.tool_calls;
    if (reasoning || content || calls?.length) this.outputChunks += 1;
    if (reasoning) this.reasoning(reasoning);
    if (content) this.content(content);
    // A whole message's calls carry no index: their position is their index.
    calls?.forEach((call, position) => this.toolCall(whole ? { ...call, index: position } : call));
  }

  private reasoning(text: string): void {
    // Output the request did not ask to see (a model that thinks by default) is not shown.
    if (!this.options.thinks) return;
    if (this.open?.kind !== 'thinking') {
      this.close();
      this.open = { kind: 'thinking' };
      this.emit({ type: 'block-start', block: { type: 'thinking', thinking: '', signature: '' } });
    }
    this.emit({ type: 'block-delta', delta: { type: 'thinking_delta', thinking: text } });
  }

  private content(text: string): void {
    const role = this.options.plan.content;
    if (role.kind === 'text') this.appendText(this.matcher ? this.matcher.push(text) : text);
    else if (role.kind === 'tool-input')
      this.toolCall({ index: -1, function: { name: role.tool.name, arguments: text } });
    else this.envelopeContent(text);
  }

  /**
   * The envelope's input streams once its name is known where the engine guides the envelope by
   * its schema (so the input is the tool's by construction); where mms must check it, the whole
   * envelope is held until then (`releaseEnvelope`).
   */
  private envelopeContent(text: string): void {
    this.envelopeText += text;
    const input = this.envelope.push(text);
    const name = this.envelope.name;
    if (!this.options.plan.guidedCalls || name === undefined) return;
    if (!this.envelopeStreamed) {
      this.envelopeStreamed = true;
      this.startCall(-1, undefined, name);
    }
    this.calls.at(-1)!.arguments += input;
    if (input !== '') this.emit({ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: input } });
  }

  private appendText(text: string): void {
    if (text === '') return;
    if (this.open?.kind !== 'text') {
      this.close();
      this.open = { kind: 'text' };
      this.emit({ type: 'block-start', block: { type: 'text', text: '', citations: null } });
    }
    this.text += text;
    this.emit({ type: 'block-delta', delta: { type: 'text_delta', text } });
  }

  private toolCall(call: ChatToolCallDelta): void {
    const id = call.id || undefined;
    // An empty name is no name yet (the call is held until one arrives), not a tool called "".
    const name = call.function?.name || undefined;
    const argumentsText = call.function?.arguments ?? '';
    const current = this.open?.kind === 'call' ? this.open : undefined;
    // A delta goes on with the open call unless its index or its id says it is another one.
    // Ollama sends every call whole at index 0, each with an id of its own; other engines send a
    // call's id on its first delta only, or repeat it on every delta, and some leave out the index.
    const sameIndex = call.index === undefined || call.index === current?.index;
    const sameId = id === undefined || current?.id === undefined || id === current.id;
    if (current && sameIndex && sameId) current.id ??= id;
    else this.startCall(call.index ?? this.calls.length, id, name);
    const open = this.open as Extract<OpenBlock, { kind: 'call' }>;
    const record = this.calls.at(-1)!;
    if (name && record.name === '') record.name = name;
    record.arguments += argumentsText;
    if (open.pending) {
      if (name && open.pending.name === '') {
        // Held for want of a name (some engines send it after the id): the tool is known only now.
        open.pending.name = name;
        open.pending.tool = this.offeredTool(name);
      }
      open.pending.arguments += argumentsText;
    } else if (argumentsText !== '') {
      this.emit({ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: argumentsText } });
    }
  }

  private startCall(index: number, id: string | undefined, name: string | undefined): void {
    this.close();
    const tool = name === undefined ? undefined : this.offeredTool(name);
    // A strict tool the engine did not hold to its schema, or a call whose name is still unknown, waits for the check.
    const check = name === undefined || (tool?.strict === true && !this.options.plan.guidedCalls);
    this.calls.push({ name: name ?? '', arguments: '', held: check });
    if (check) {
      const pending: PendingCall = { type: 'pending-call', name: name ?? '', tool, arguments: '' };
      this.held ??= [];
      this.held.push(pending);
      this.open = { kind: 'call', index, id, pending };
      return;
    }
    this.open = { kind: 'call', index, id, pending: undefined };
    this.emit({ type: 'block-start', block: toolCallBlock({ name: name!, server: tool?.server === true }) });
  }

  /**
   * The offered tool a call names (output-plan.ts). A name the request did not offer is refused
   * at once, before any block of the call is passed on: the client must never see a call of a
   * tool it does not have.
   */
  private offeredTool(name: string): OfferedTool {
    const tool = plannedTool(this.options.plan, name);
    if (!tool) throw notOfferedError(name);
    return tool;
  }

  /**
   * `{"name", "input"}` generated for one of several tools: released as that tool's call, after
   * the check; one cut by max_tokens is released as far as its input came.
   */
  private releaseEnvelope(): void {
    let name = this.envelope.name ?? '';
    let input = this.envelope.name === undefined ? this.envelopeText : this.envelope.inputText;
    try {
      const parsed = JSON.parse(this.envelopeText) as { name?: unknown; input?: unknown };
      if (typeof parsed.name === 'string') name = parsed.name;
      input = JSON.stringify(parsed.input ?? {});
    } catch {
      // Cut off or not JSON: the check below refuses it, or it is released as it came.
    }
    const tools = this.options.plan.content.kind === 'tool-envelope' ? this.options.plan.content.tools : [];
    const pending: PendingCall = {
      type: 'pending-call',
      name,
      tool: tools.find((tool) => tool.name === name),
      arguments: input,
    };
    this.calls.push({ name, arguments: input, held: true });
    this.held ??= [];
    this.held.push(pending);
  }

  private close(): void {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    if (open.kind === 'call' && open.pending) return;
    this.emit({ type: 'block-stop' });
  }

  private emit(part: StreamPart): void {
    if (this.held) this.held.push(part);
    else this.out.push(part);
  }
}
