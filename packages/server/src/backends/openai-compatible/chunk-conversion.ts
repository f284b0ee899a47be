/**
 * Engine chunks in, stream parts out, as they come: reasoning deltas into a thinking block
 * (the turn's step reader signs it), text deltas into a text block, tool-call
 * argument deltas into tool_use (or, for a server tool, server_tool_use) blocks as
 * input_json_delta. A whole `chat.completion` is read the same way, as one big delta. Pure:
 * no I/O; the backend feeds it.
 *
 * A call's input streams by how far it can be trusted (issue 35). One the engine guided (a
 * forced or required call it holds to the schema) streams as it comes. One it did not guide
 * streams a member at a time (call/input-members.ts), so that input that turns out broken can
 * still be repaired: settled here once the call ends when it is whole and has its required
 * fields, else finished by the backend after a repair (`OpenCall`). A strict tool's input the
 * engine did not guide is held whole until checked (`PendingCall`), and so is a call the model
 * left in its text (leaked-calls/), found only once the reply ends. From the first held item on,
 * parts are held, in order, and the backend releases them after the check.
 */
import type { StreamPart } from '../../streaming/stream-part.js';
import type { ChatChoice, ChatCompletionChunk, ChatDelta, ChatToolCallDelta } from './chat-types.js';
import { streamError } from './error-mapping.js';
import type { OfferedTool } from '../call/model-call.js';
import { InputMembers } from '../call/input-members.js';
import { consecutiveJsonValues } from '../call/json-scan.js';
import { checkToolValue } from '../call/output-check.js';
import { toolCallBlock } from '../call/tool-calls.js';
import { ToolEnvelopeReader } from '../call/tool-envelope-reader.js';
import { LeakedCallReader } from './leaked-calls/leaked-call-reader.js';
import { isObject, type TextCallSyntax } from './leaked-calls/text-call.js';
import { TEXT_CALL_SYNTAXES } from './leaked-calls/text-call-syntaxes.js';
import { plannedTool, type ChatPlan } from './output-plan.js';
import type {
  CallOrigin,
  CallRecord,
  ChunkSummary,
  HeldItem,
  InputStreaming,
  OpenCall,
  PendingCall,
} from './chunk-summary.js';
import { StopSequenceMatcher } from './stop-sequence-matcher.js';

export interface ConverterOptions {
  engine: string;
  plan: ChatPlan;
  thinks: boolean;
  /** Matched in mms (engines that do not report the stop string); empty: none. */
  stopSequences: readonly string[];
  /** The syntaxes a call left in the text is read in (the backend's `textCallSyntaxes`); default all. */
  textCallSyntaxes?: readonly TextCallSyntax[];
}

interface OpenToolCall {
  kind: 'call';
  index: number;
  id: string | undefined;
  /** The name as it came so far: some engines send it in pieces. */
  name: string;
  /** Undefined until the name is settled (its input starts, or the call ends). */
  streaming: InputStreaming | undefined;
  tool: OfferedTool | undefined;
  /** Input that came before the name was settled. */
  early: string;
  pending: PendingCall | undefined;
  members: InputMembers | undefined;
  /** The input's closing bracket went out: it was whole and had its required fields. */
  closedOut: boolean;
}

type OpenBlock = { kind: 'thinking' } | { kind: 'text' } | OpenToolCall;

export class ChunkConverter {
  private out: StreamPart[] = [];
  private held: HeldItem[] | undefined;
  private open: OpenBlock | undefined;
  private text = '';
  /** `{"name", "input"}` of one call among several tools, as the engine writes it in its content. */
  private readonly envelope = new ToolEnvelopeReader();
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
  /** Calls the model wrote into its text, where it may call tools (issue 35). */
  private readonly leaked: LeakedCallReader | undefined;

  constructor(private readonly options: ConverterOptions) {
    const text = options.plan.content.kind === 'text';
    this.matcher =
      options.stopSequences.length > 0 && text ? new StopSequenceMatcher(options.stopSequences) : undefined;
    const syntaxes = options.textCallSyntaxes ?? TEXT_CALL_SYNTAXES;
    this.leaked =
      text && syntaxes.length > 0 && options.plan.tools.length > 0 && options.plan.toolChoice !== 'none'
        ? new LeakedCallReader(syntaxes, options.plan.tools)
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
    if (this.leaked) {
      const { text, calls } = this.leaked.end();
      this.showText(text);
      this.close();
      for (const call of calls) this.hold(call.tool.name, call.tool, JSON.stringify(call.input), 'text');
    }
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
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    if (delta) this.delta(delta, choice.message !== undefined);
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
    const input = this.envelope.push(text);
    const name = this.envelope.name;
    if (!this.options.plan.guidedCalls || name === undefined) return;
    if (!this.envelopeStreamed) {
      this.envelopeStreamed = true;
      const call = this.openCall(-1, undefined);
      call.name = name;
      this.settleName(call);
    }
    this.calls.at(-1)!.arguments += input;
    this.inputDelta(input);
  }

  /** The model's text, through the search for calls it leaves there. */
  private appendText(text: string): void {
    this.showText(this.leaked && text !== '' ? this.leaked.push(text) : text);
  }

  private showText(text: string): void {
    if (text === '') return;
    if (this.open?.kind !== 'text') {
      this.close();
      this.open = { kind: 'text' };
      this.emit({ type: 'block-start', block: { type: 'text', text: '', citations: null } });
    }
    this.text += text;
    this.emit({ type: 'block-delta', delta: { type: 'text_delta', text } });
  }

  private toolCall(delta: ChatToolCallDelta): void {
    const id = delta.id || undefined;
    const argumentsText = delta.function?.arguments ?? '';
    const current = this.open?.kind === 'call' ? this.open : undefined;
    // A delta goes on with the open call unless its index or its id says it is another one.
    // Ollama sends every call whole at index 0, each with an id of its own; other engines send a
    // call's id on its first delta only, or repeat it on every delta, and some leave out the index.
    const sameIndex = delta.index === undefined || delta.index === current?.index;
    const sameId = id === undefined || current?.id === undefined || id === current.id;
    let call: OpenToolCall;
    if (current && sameIndex && sameId) {
      call = current;
      call.id ??= id;
    } else call = this.openCall(delta.index ?? this.calls.length, id);
    // An empty name is no name yet, not a tool called "".
    if (delta.function?.name) this.addName(call, delta.function.name);
    if (argumentsText === '') return;
    if (call.streaming === undefined && call.name !== '') this.settleName(call);
    this.input(call, argumentsText);
  }

  private openCall(index: number, id: string | undefined): OpenToolCall {
    this.close();
    const call: OpenToolCall = {
      kind: 'call',
      index,
      id,
      name: '',
      streaming: undefined,
      tool: undefined,
      early: '',
      pending: undefined,
      members: undefined,
      closedOut: false,
    };
    this.open = call;
    return call;
  }

  /**
   * A piece of a call's name. Most engines send it whole once; some repeat it on every delta,
   * and some split it (issue 35: nothing of a call is lost where an engine splits it oddly).
   */
  private addName(call: OpenToolCall, piece: string): void {
    if (call.streaming !== undefined && call.pending === undefined) return;
    const joined = call.name + piece;
    if (call.name === '' || this.options.plan.tools.some((tool) => tool.name.startsWith(joined))) call.name = joined;
    if (call.pending && call.pending.name === '') {
      // Held for want of a name (some engines send it after the id): the tool is known only now.
      call.pending.name = call.name;
      call.pending.tool = plannedTool(this.options.plan, call.name);
    }
  }

  /** The call's tool is known: its block opens, or it is held, by how its input will come. */
  private settleName(call: OpenToolCall): void {
    // A tool the request did not offer is refused here, before any block of the call goes out.
    const tool = plannedTool(this.options.plan, call.name);
    call.tool = tool;
    const guided = this.options.plan.guidedCalls;
    call.streaming = guided ? 'guided' : tool.strict ? 'held' : 'members';
    this.calls.push({ name: call.name, arguments: '', streaming: call.streaming });
    if (call.streaming === 'held') {
      call.pending = this.hold(call.name, tool, '', 'engine');
      return;
    }
    this.emit({ type: 'block-start', block: toolCallBlock({ name: call.name, server: tool.server }) });
    if (call.streaming === 'members') call.members = new InputMembers();
  }

  private input(call: OpenToolCall, text: string): void {
    if (call.streaming === undefined) {
      // No name yet: held until one comes, whatever the tool turns out to be.
      call.streaming = 'held';
      call.pending = this.hold('', undefined, '', 'engine');
      this.calls.push({ name: '', arguments: '', streaming: 'held' });
    }
    this.calls.at(-1)!.arguments += text;
    if (call.pending) call.pending.arguments += text;
    else if (call.members) this.memberDelta(call, call.members.push(text));
    else this.inputDelta(text);
  }

  /** Members out; and the closing bracket with them once the input is whole and has its required fields. */
  private memberDelta(call: OpenToolCall, members: string): void {
    const object = call.closedOut ? undefined : call.members!.object();
    const whole = object !== undefined && call.members!.closedAt !== undefined;
    if (whole && checkToolValue(object, call.tool!).violation === undefined) {
      call.closedOut = true;
      return this.inputDelta(members + call.members!.closing());
    }
    this.inputDelta(members);
  }

  private inputDelta(json: string): void {
    if (json !== '') this.emit({ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: json } });
  }

  /** A call held whole until the backend checked it. */
  private hold(name: string, tool: OfferedTool | undefined, input: string, origin: CallOrigin): PendingCall {
    const pending: PendingCall = { type: 'pending-call', name, tool, arguments: input, origin };
    if (origin !== 'engine') this.calls.push({ name, arguments: input, streaming: 'held' });
    this.held ??= [];
    this.held.push(pending);
    return pending;
  }

  /**
   * `{"name", "input"}` generated for one of several tools: released as that tool's call, after
   * the check; one cut by max_tokens is released as far as its input came.
   */
  private releaseEnvelope(): void {
    let name = this.envelope.name ?? '';
    let input = this.envelope.name === undefined ? this.envelope.text : this.envelope.inputText;
    try {
      const parsed = JSON.parse(this.envelope.text) as { name?: unknown; input?: unknown };
      if (typeof parsed.name === 'string') name = parsed.name;
      input = JSON.stringify(parsed.input ?? {});
    } catch {
      // Cut off or not JSON: the check below refuses it, or it is released as it came.
    }
    const tools = this.options.plan.content.kind === 'tool-envelope' ? this.options.plan.content.tools : [];
    this.calls.push({ name, arguments: input, streaming: 'held' });
    this.hold(
      name,
      tools.find((tool) => tool.name === name),
      input,
      'engine',
    );
  }

  private close(): void {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    if (open.kind !== 'call') return this.emit({ type: 'block-stop' });
    // A call whose input never came: its name is all there is.
    if (open.streaming === undefined) {
      if (open.name === '') return;
      this.settleName(open);
    }
    if (open.pending) return;
    if (open.members) return this.closeMembers(open);
    this.emit({ type: 'block-stop' });
  }

  /**
   * A call that streamed member by member, at its end. Cut by max_tokens, the rest of its input
   * goes as it came. Whole and with its required fields, it closes as the engine wrote it; what
   * the engine ran on with after it (a second call's input run into the first's) becomes calls
   * of their own. Otherwise it stays open for the backend to repair.
   */
  private closeMembers(call: OpenToolCall): void {
    const tool = call.tool!;
    const members = call.members!;
    if (!call.closedOut && this.finishReason === 'length') {
      this.inputDelta(members.rest());
      return this.emit({ type: 'block-stop' });
    }
    const object = members.object();
    if (object === undefined || checkToolValue(object, tool).violation !== undefined) {
      this.held ??= [];
      this.held.push({ type: 'open-call', tool, members });
      return;
    }
    const after = members.after();
    // Empty arguments are the input {}, where the schema asks for no field.
    if (!call.closedOut)
      this.inputDelta(members.closedAt === undefined ? members.completion(object) : members.closing());
    this.emit({ type: 'tool-call-outcome', outcome: after.trim() === '' ? 'clean' : 'repaired' });
    this.emit({ type: 'block-stop' });
    // Each object the engine ran on with is a call of the same tool, checked as a held one.
    for (const value of consecutiveJsonValues(after) ?? [])
      if (isObject(value)) this.hold(tool.name, tool, JSON.stringify(value), 'run-on');
  }

  private emit(part: StreamPart): void {
    if (this.held) this.held.push(part);
    else this.out.push(part);
  }
}
