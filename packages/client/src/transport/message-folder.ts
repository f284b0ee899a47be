/**
 * Folds stream events into one message, the way the service's own JSON reply is the fold of
 * its stream. It also remembers what the retry ladder needs: whether any content arrived
 * before an `error` event, and the usage reported so far when a stream is cut short.
 */
import type { ContentBlock, Message, StreamEvent, Usage } from '@model-messages/protocol';

/** An `error` event in a 200 stream. */
export class StreamErrorEvent extends Error {
  readonly errorType: string;
  readonly beforeContent: boolean;
  /**
   * The `retry-after` an mms puts in its error events (`mms_retry_after`, seconds): its stream
   * opens at admission, so a failure its status reply would have sent with `retry-after` comes
   * as an event after the headers. Undefined for other services, or when it sent none.
   */
  readonly retryAfterSeconds: number | undefined;

  constructor(errorType: string, message: string, beforeContent: boolean, retryAfterSeconds?: number) {
    super(message);
    this.name = 'StreamErrorEvent';
    this.errorType = errorType;
    this.beforeContent = beforeContent;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Stream events out of order or malformed: a broken transport, not an answer. */
export class StreamProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StreamProtocolError';
  }
}

export interface FoldedMessage {
  message: Message;
  /** Tool input JSON that did not parse, by tool_use id (a cut-off or broken input). */
  unparsedInputs: Map<string, string>;
}

export class MessageFolder {
  private message: Message | undefined;
  private readonly blocks: ContentBlock[] = [];
  private open: { block: ContentBlock; json: string } | undefined;
  private readonly unparsedInputs = new Map<string, string>();
  private stopped = false;

  apply(event: StreamEvent): void {
    switch (event.type) {
      case 'message_start':
        this.message = { ...event.message, content: [], usage: { ...event.message.usage } };
        return;
      case 'content_block_start':
        this.started();
        if (this.open)
          throw new StreamProtocolError(`content_block_start while a ${this.open.block.type} block is open`);
        this.open = { block: structuredClone(event.content_block), json: '' };
        return;
      case 'content_block_delta':
        this.delta(event.delta);
        return;
      case 'content_block_stop':
        this.stop();
        return;
      case 'message_delta': {
        const message = this.started();
        message.stop_reason = event.delta.stop_reason;
        message.stop_sequence = event.delta.stop_sequence;
        Object.assign(message.usage, event.usage);
        return;
      }
      case 'message_stop':
        this.stopped = true;
        return;
      case 'ping':
        return;
      case 'error':
        throw new StreamErrorEvent(
          event.error.type,
          event.error.message,
          !this.hasContent,
          typeof event.mms_retry_after === 'number' && event.mms_retry_after >= 0 ? event.mms_retry_after : undefined,
        );
      default:
        return event satisfies never;
    }
  }

  /** Whether any content block started: an error after this point is not retried. */
  get hasContent(): boolean {
    return this.blocks.length > 0 || this.open !== undefined;
  }

  get finished(): boolean {
    return this.stopped;
  }

  /** Usage reported so far, for a stream cut short. */
  get usage(): Usage | undefined {
    return this.message?.usage;
  }

  result(): FoldedMessage {
    const message = this.started();
    if (!this.stopped || message.stop_reason === null)
      throw new StreamProtocolError('the stream ended before message_stop');
    return { message: { ...message, content: this.blocks }, unparsedInputs: this.unparsedInputs };
  }

  private started(): Message {
    if (!this.message) throw new StreamProtocolError('an event came before message_start');
    return this.message;
  }

  private delta(delta: Extract<StreamEvent, { type: 'content_block_delta' }>['delta']): void {
    const open = this.open;
    if (!open) throw new StreamProtocolError(`${delta.type} outside a content block`);
    const block = open.block;
    if (delta.type === 'text_delta' && block.type === 'text') block.text += delta.text;
    else if (delta.type === 'thinking_delta' && block.type === 'thinking') block.thinking += delta.thinking;
    else if (delta.type === 'signature_delta' && block.type === 'thinking') block.signature += delta.signature;
    else if (delta.type === 'input_json_delta' && (block.type === 'tool_use' || block.type === 'server_tool_use'))
      open.json += delta.partial_json;
    else throw new StreamProtocolError(`${delta.type} does not fit a ${block.type} block`);
  }

  private stop(): void {
    const open = this.open;
    if (!open) throw new StreamProtocolError('content_block_stop with no open block');
    const block = open.block;
    if ((block.type === 'tool_use' || block.type === 'server_tool_use') && open.json !== '') {
      try {
        block.input = JSON.parse(open.json) as Record<string, unknown>;
      } catch {
        this.unparsedInputs.set(block.id, open.json);
        block.input = {};
      }
    }
    this.blocks.push(block);
    this.open = undefined;
  }
}
