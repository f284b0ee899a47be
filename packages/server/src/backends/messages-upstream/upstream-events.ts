/**
 * The upstream's wire events -> our stream parts, so that our own encoder frames them again
 * (indices, message_start with our id and input count, cumulative usage) and the JSON reply is
 * still the fold of the stream. A tool_use of a server tool's name is the upstream model calling
 * a server tool that this service runs (see upstream-request.ts): it becomes server_tool_use.
 */
import { ServiceError, type ContentBlock, type ContentBlockDelta, type StopReason } from '@model-messages/protocol';
import type { StreamPart } from '../../streaming/stream-part.js';
import { upstreamEventError, type UpstreamErrorBody } from './upstream-errors.js';

const STOP_REASONS: ReadonlySet<string> = new Set([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
]);

interface WireEvent {
  type?: unknown;
  content_block?: Record<string, unknown>;
  delta?: Record<string, unknown>;
  message?: { usage?: WireUsage };
  usage?: WireUsage;
}

interface WireUsage {
  output_tokens?: unknown;
  input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
}

export class UpstreamEventReader {
  private stopReason: StopReason | undefined;
  private stopSequence: string | null = null;
  /** The prompt's usage as the upstream reported it so far: message_start's, then message_delta's. */
  private readonly promptUsage: Extract<StreamPart, { type: 'input-tokens' }> = { type: 'input-tokens', count: 0 };
  /** The upstream sent input_tokens: the parts above may go on. */
  private promptCounted = false;
  /** message_start's figures went out with the first block. */
  private promptSentEarly = false;
  /** The upstream sent message_stop: the step is complete. */
  finished = false;

  constructor(
    /** The backend as error replies name it, by its model (upstream-errors.ts). */
    private readonly where: string,
    private readonly serverTools: ReadonlySet<string>,
  ) {}

  /** Appends the parts of one event's JSON data to `parts`. Throws the upstream's error events. */
  read(data: string, parts: StreamPart[]): void {
    let event: WireEvent;
    try {
      event = JSON.parse(data) as WireEvent;
    } catch {
      throw this.protocolError(`an event that is not JSON: ${data.slice(0, 200)}`);
    }
    switch (event.type) {
      case 'content_block_start':
        // message_start's split of the prompt goes with the first output too, so that a stream
        // its client cuts is recorded with the upstream's cache use (issue 32).
        if (this.promptCounted && !this.promptSentEarly) parts.push({ ...this.promptUsage });
        this.promptSentEarly = true;
        parts.push({ type: 'block-start', block: this.block(event.content_block) });
        return;
      case 'content_block_delta':
        parts.push({ type: 'block-delta', delta: this.delta(event.delta) });
        return;
      case 'content_block_stop':
        parts.push({ type: 'block-stop' });
        return;
      case 'message_delta':
        this.messageDelta(event, parts);
        return;
      case 'message_stop':
        if (this.stopReason === undefined) throw this.protocolError('message_stop before any stop_reason');
        parts.push({ type: 'finish', stopReason: this.stopReason, stopSequence: this.stopSequence });
        this.finished = true;
        return;
      case 'error':
        throw upstreamEventError(this.where, event as UpstreamErrorBody);
      case 'message_start':
        // Held until message_delta: a part now would count as the step's first output, which
        // stops the first-output timer and a fallback list's move to the next backend.
        this.readPromptUsage(event.message?.usage);
        return;
      case 'ping':
        return;
      default:
        // New event types are ignored, as the public API asks of its clients.
        return;
    }
  }

  private block(start: Record<string, unknown> | undefined): ContentBlock {
    switch (start?.type) {
      case 'text':
        return { type: 'text', text: stringField(start.text), citations: null };
      case 'thinking':
        return { type: 'thinking', thinking: stringField(start.thinking), signature: stringField(start.signature) };
      case 'tool_use': {
        const id = stringField(start.id);
        const name = stringField(start.name);
        const input = isObject(start.input) ? start.input : {};
        if (this.serverTools.has(name))
          return { type: 'server_tool_use', id: id.startsWith('toolu_') ? `srv${id}` : id, name, input };
        return { type: 'tool_use', id, name, input, caller: { type: 'direct' } };
      }
      default:
        throw this.protocolError(`a content block of type ${String(start?.type)}, which this service cannot relay`);
    }
  }

  private delta(delta: Record<string, unknown> | undefined): ContentBlockDelta {
    switch (delta?.type) {
      case 'text_delta':
        return { type: 'text_delta', text: stringField(delta.text) };
      case 'thinking_delta':
        return { type: 'thinking_delta', thinking: stringField(delta.thinking) };
      case 'signature_delta':
        return { type: 'signature_delta', signature: stringField(delta.signature) };
      case 'input_json_delta':
        return { type: 'input_json_delta', partial_json: stringField(delta.partial_json) };
      default:
        throw this.protocolError(`a delta of type ${String(delta?.type)}, which this service cannot relay`);
    }
  }

  private messageDelta(event: WireEvent, parts: StreamPart[]): void {
    const reason = event.delta?.stop_reason;
    if (typeof reason === 'string') {
      if (!STOP_REASONS.has(reason)) throw this.protocolError(`stop_reason ${reason}`);
      this.stopReason = reason as StopReason;
      this.stopSequence = typeof event.delta?.stop_sequence === 'string' ? event.delta.stop_sequence : null;
    }
    // An upstream mms reports its engine's own prompt count here (it may have estimated it up front).
    this.readPromptUsage(event.usage);
    // Cache figures without the prompt's own count would make a usage of 0 input tokens.
    if (this.promptCounted) parts.push({ ...this.promptUsage });
    const outputTokens = event.usage?.output_tokens;
    if (typeof outputTokens === 'number' && Number.isFinite(outputTokens))
      parts.push({ type: 'output-tokens', count: outputTokens });
  }

  /**
   * The prompt's tokens and the upstream's cache use, passed on as they are (they are split as
   * ours are) with message_delta. message_start carries them; message_delta may carry them
   * again, cumulative, when they became known during generation (an upstream mms that
   * estimated up front).
   */
  private readPromptUsage(usage: WireUsage | undefined): void {
    if (usage === undefined) return;
    const { input_tokens: count, cache_read_input_tokens: cacheRead, cache_creation_input_tokens: created } = usage;
    if (isCount(count)) {
      this.promptUsage.count = count;
      this.promptCounted = true;
    }
    if (isCount(cacheRead)) this.promptUsage.cacheRead = cacheRead;
    if (isCount(created)) this.promptUsage.cacheCreation = created;
  }

  private protocolError(what: string): ServiceError {
    return new ServiceError('internal', `${this.where}: its upstream sent ${what}`);
  }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function stringField(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
