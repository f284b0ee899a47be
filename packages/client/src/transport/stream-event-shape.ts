/**
 * What a 2xx stream's bytes must be before the folder reads them (issue 32). The spec tells a
 * successful response with no usable answer (retried at most once above the HTTP layer, and a
 * decline) from a transport failure (the HTTP layer's): these checks say which bytes are no
 * message. An event that is not JSON, not an object with a type, or lacks the fields the folder
 * reads (a `message_start` with no message or usage, a delta with no text) throws
 * StreamProtocolError, where reading it blindly threw a TypeError that the attempt took for a
 * broken connection.
 */
import type { StreamEvent } from '@model-messages/protocol';
import { StreamProtocolError } from './message-folder.js';

/** The field each delta type carries its text in. */
const DELTA_TEXT_FIELDS: Readonly<Record<string, string>> = {
  text_delta: 'text',
  thinking_delta: 'thinking',
  signature_delta: 'signature',
  input_json_delta: 'partial_json',
};

/** An SSE frame's data as an event; SyntaxError for data that is not JSON. */
export function readStreamEvent(data: string): StreamEvent {
  const event: unknown = JSON.parse(data);
  const problem = eventProblem(event);
  if (problem !== undefined) throw new StreamProtocolError(`${problem}: ${data.slice(0, 200)}`);
  return event as StreamEvent;
}

function eventProblem(event: unknown): string | undefined {
  if (!isRecord(event) || typeof event.type !== 'string') return 'an event that is not an object with a type';
  switch (event.type) {
    case 'message_start':
      return isRecord(event.message) && isRecord(event.message.usage)
        ? undefined
        : 'a message_start without a message and its usage';
    case 'content_block_start':
      return isRecord(event.content_block) && typeof event.content_block.type === 'string'
        ? undefined
        : 'a content_block_start without a typed content block';
    case 'content_block_delta':
      return deltaProblem(event.delta);
    case 'message_delta':
      return isRecord(event.delta) && (event.usage === undefined || isRecord(event.usage))
        ? undefined
        : 'a message_delta without its delta';
    case 'error':
      return isRecord(event.error) && typeof event.error.type === 'string'
        ? undefined
        : 'an error event without a typed error';
    default:
      return undefined;
  }
}

function deltaProblem(delta: unknown): string | undefined {
  if (!isRecord(delta) || typeof delta.type !== 'string') return 'a content_block_delta without a typed delta';
  const field = DELTA_TEXT_FIELDS[delta.type];
  // A delta type the folder does not know is its to refuse, naming the block it does not fit.
  if (field === undefined || typeof delta[field] === 'string') return undefined;
  return `a ${delta.type} without its ${field}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An SSE line that is a field (`event`, `data`, `id`, `retry`, llama.cpp's `error`), a comment or blank. */
const STREAM_LINE = /^(?:(?:event|data|id|retry|error)(?::|$)|:|\s*$)/;

/**
 * Whether text that formed no event holds lines that are no part of an event stream at all (a
 * proxy's HTML page under a 200, say): bytes that arrived and are unreadable, where SSE fields
 * cut off before their frame ended are a stream cut short. `whole`: the text is all the body
 * held, so its last line is complete too; otherwise that line may have been cut where the text
 * was, and does not count.
 */
export function holdsForeignLines(text: string, whole: boolean): boolean {
  const lines = text.split(/\r\n|\r|\n/);
  return (whole ? lines : lines.slice(0, -1)).some((line) => !STREAM_LINE.test(line));
}
