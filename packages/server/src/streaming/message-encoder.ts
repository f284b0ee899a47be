/**
 * Pure state machine: stream parts in, wire events out. Adds block indices, the message
 * framing and cumulative usage. It refuses parts out of order, so a backend bug surfaces as an
 * error rather than a malformed stream.
 */
import type {
  ContextManagementResponse,
  Message,
  StopReason,
  StreamEvent,
  Usage,
  UsageIteration,
} from '@model-messages/protocol';
import type { StreamPart, ToolCallOutcome } from './stream-part.js';

export interface MessageHeader {
  id: string;
  model: string;
  inputTokens: number;
  /**
   * The context edits applied before the turn (issue 34), for a request that sent
   * `context_management`: the final message_delta carries them, and so the JSON reply.
   */
  contextManagement?: ContextManagementResponse;
}

/** The stop reason (undefined until the message finished) and the usage so far. */
export interface MessageSummary {
  stopReason: StopReason | undefined;
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /** tool_use blocks: the calls of the client's tools the message made (the console shows them, issue 37). */
  toolCalls: number;
  /**
   * The model's tool calls by how they became blocks (issue 35); undefined when the backend
   * reported none (the scripted backend and a Messages upstream do not check calls).
   */
  toolCallOutcomes: Partial<Record<ToolCallOutcome, number>> | undefined;
}

export class MessageEncoder {
  private index = -1;
  private blockOpen = false;
  private outputTokens = 0;
  /**
   * Generated deltas (text, thinking, tool input) since the engine last reported its count: a turn
   * cut short (its client left) between two counts still generated them, at least a token each.
   */
  private uncountedDeltas = 0;
  /** The up-front count, until the engine reports its own (an `input-tokens` part). */
  private inputTokens: number;
  private cacheReadInputTokens = 0;
  private cacheCreationInputTokens = 0;
  private finished = false;
  private stopReason: StopReason | undefined;
  private serverToolUse: Usage['server_tool_use'] = null;
  private toolCalls = 0;
  private toolCallOutcomes: Partial<Record<ToolCallOutcome, number>> | undefined;
  /** The compaction's call, when the turn compacted its conversation (issue 34). */
  private compaction: UsageIteration | undefined;

  constructor(private readonly header: MessageHeader) {
    this.inputTokens = header.inputTokens;
  }

  start(): StreamEvent {
    const message: Message = {
      id: this.header.id,
      type: 'message',
      role: 'assistant',
      model: this.header.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: this.usage(),
    };
    return { type: 'message_start', message };
  }

  /**
   * Appends the events of `part` to `events`: a batch of parts becomes one array, with no array
   * per part to allocate and flatten (every reply passes each of its parts through here).
   */
  encodeInto(part: StreamPart, events: StreamEvent[]): void {
    if (this.finished) throw new Error(`${part.type} after the message finished`);
    switch (part.type) {
      case 'block-start':
        if (this.blockOpen) throw new Error('block-start while a block is open');
        this.blockOpen = true;
        this.index += 1;
        if (part.block.type === 'tool_use') this.toolCalls += 1;
        events.push({ type: 'content_block_start', index: this.index, content_block: part.block });
        return;
      case 'block-delta':
        if (!this.blockOpen) throw new Error('block-delta outside a block');
        events.push({ type: 'content_block_delta', index: this.index, delta: part.delta });
        if (part.delta.type !== 'signature_delta') this.uncountedDeltas += 1;
        return;
      case 'block-stop':
        if (!this.blockOpen) throw new Error('block-stop with no open block');
        this.blockOpen = false;
        events.push({ type: 'content_block_stop', index: this.index });
        return;
      case 'output-tokens':
        this.outputTokens = part.count;
        this.uncountedDeltas = 0;
        return;
      case 'input-tokens':
        this.inputTokens = part.count;
        this.cacheReadInputTokens = part.cacheRead ?? 0;
        this.cacheCreationInputTokens = part.cacheCreation ?? 0;
        return;
      case 'server-tool-usage':
        this.serverToolUse = part.usage;
        return;
      case 'compaction-usage':
        this.compaction = {
          type: 'compaction',
          input_tokens: part.inputTokens,
          output_tokens: part.outputTokens,
          cache_creation_input_tokens: part.cacheCreation,
          cache_read_input_tokens: part.cacheRead,
          cache_creation: null,
        };
        return;
      case 'tool-call-outcome':
        this.toolCallOutcomes ??= {};
        this.toolCallOutcomes[part.outcome] = (this.toolCallOutcomes[part.outcome] ?? 0) + 1;
        return;
      case 'finish':
        this.finish(part.stopReason, part.stopSequence, events);
        return;
      default:
        part satisfies never;
    }
  }

  /**
   * What the message came to so far, for the access log, the metrics (observability/) and the
   * key's limits: output tokens as last counted, and at least one for each delta generated since,
   * with a compaction's summary among them: the reply's usage leaves it out, as the public API's
   * does, but the key caused its generation all the same.
   */
  summary(): MessageSummary {
    return {
      stopReason: this.stopReason,
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens + this.uncountedDeltas + (this.compaction?.output_tokens ?? 0),
      cacheReadInputTokens: this.cacheReadInputTokens,
      cacheCreationInputTokens: this.cacheCreationInputTokens,
      toolCalls: this.toolCalls,
      toolCallOutcomes: this.toolCallOutcomes,
    };
  }

  private finish(stopReason: StopReason, stopSequence: string | null, events: StreamEvent[]): void {
    this.stopReason = stopReason;
    if (this.blockOpen) {
      this.blockOpen = false;
      events.push({ type: 'content_block_stop', index: this.index });
    }
    this.finished = true;
    events.push({
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: stopSequence, stop_details: null, container: null },
      // The public stream's message_delta usage carries input_tokens too: the place for a
      // count that became known during generation (the official SDK's accumulator takes it).
      usage: {
        input_tokens: this.inputTokens,
        output_tokens: this.outputTokens,
        cache_creation_input_tokens: this.cacheCreationInputTokens,
        cache_read_input_tokens: this.cacheReadInputTokens,
        server_tool_use: this.serverToolUse,
        output_tokens_details: null,
        ...(this.compaction ? { iterations: [this.compaction, this.messageIteration()] } : {}),
      },
      ...(this.header.contextManagement ? { context_management: this.header.contextManagement } : {}),
    });
    events.push({ type: 'message_stop' });
  }

  /** The message's own sampling, as `usage.iterations` lists it after a compaction's. */
  private messageIteration(): UsageIteration {
    return {
      type: 'message',
      input_tokens: this.inputTokens,
      output_tokens: this.outputTokens,
      cache_creation_input_tokens: this.cacheCreationInputTokens,
      cache_read_input_tokens: this.cacheReadInputTokens,
      cache_creation: null,
    };
  }

  private usage(): Usage {
    return {
      input_tokens: this.header.inputTokens,
      output_tokens: this.outputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: null,
      server_tool_use: this.serverToolUse,
      service_tier: 'standard',
      inference_geo: null,
      output_tokens_details: null,
      speed: null,
    };
  }
}
