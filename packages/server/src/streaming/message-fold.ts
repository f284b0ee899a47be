/**
 * The JSON reply is the fold of the event stream: the non-streaming path runs exactly the
 * events the streaming path would write, and folds them here.
 */
import type { Message, StreamEvent } from '@model-messages/protocol';
import { ServiceError } from '@model-messages/protocol';
import { BlockAssembler } from './block-assembler.js';

export class MessageFold {
  private message: Message | undefined;
  private readonly assembler = new BlockAssembler();

  apply(event: StreamEvent): void {
    switch (event.type) {
      case 'message_start':
        this.message = { ...event.message, usage: { ...event.message.usage } };
        return;
      case 'content_block_start':
        this.assembler.start(event.content_block);
        return;
      case 'content_block_delta':
        this.assembler.delta(event.delta);
        return;
      case 'content_block_stop':
        this.assembler.stop();
        return;
      case 'message_delta':
        this.applyDelta(event);
        return;
      case 'message_stop':
      case 'ping':
        return;
      case 'error':
        throw new ServiceError('internal', event.error.message);
      default:
        return event satisfies never;
    }
  }

  private applyDelta(event: Extract<StreamEvent, { type: 'message_delta' }>): void {
    const message = this.started();
    message.stop_reason = event.delta.stop_reason;
    message.stop_sequence = event.delta.stop_sequence;
    message.usage.input_tokens = event.usage.input_tokens;
    message.usage.output_tokens = event.usage.output_tokens;
    message.usage.cache_creation_input_tokens = event.usage.cache_creation_input_tokens;
    message.usage.cache_read_input_tokens = event.usage.cache_read_input_tokens;
    message.usage.server_tool_use = event.usage.server_tool_use;
    if (event.usage.iterations) message.usage.iterations = event.usage.iterations;
    if (event.context_management) message.context_management = event.context_management;
  }

  private started(): Message {
    if (!this.message) throw new Error('event before message_start');
    return this.message;
  }

  result(): Message {
    const message = this.started();
    if (message.stop_reason === null) throw new Error('the stream ended before message_delta');
    return { ...message, content: this.assembler.blocks };
  }
}
