import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamEvent } from '@model-messages/protocol';
import { MessageFolder, StreamErrorEvent, StreamProtocolError } from '../src/transport/message-folder.js';

const usage = {
  input_tokens: 10,
  output_tokens: 1,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation: null,
  server_tool_use: null,
  service_tier: 'standard',
  inference_geo: null,
  output_tokens_details: null,
  speed: null,
} as const;
const start: StreamEvent = {
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'mid',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage,
  },
};
const delta = (stopReason: 'tool_use' | 'max_tokens', output: number): StreamEvent => ({
  type: 'message_delta',
  delta: { stop_reason: stopReason, stop_sequence: null, stop_details: null, container: null },
  usage: {
    input_tokens: 10,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    server_tool_use: null,
    output_tokens_details: null,
  },
});

function fold(events: StreamEvent[]): MessageFolder {
  const folder = new MessageFolder();
  events.forEach((event) => folder.apply(event));
  return folder;
}

test("text and tool input deltas fold into blocks; usage is the last delta's", () => {
  const folder = fold([
    start,
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: null } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'emit', input: {}, caller: { type: 'direct' } },
    },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"name":' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Ada"}' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'ping' },
    delta('tool_use', 7),
    { type: 'message_stop' },
  ]);
  const { message, unparsedInputs } = folder.result();
  assert.deepEqual(message.content, [
    { type: 'text', text: 'Hello', citations: null },
    { type: 'tool_use', id: 'toolu_1', name: 'emit', input: { name: 'Ada' }, caller: { type: 'direct' } },
  ]);
  assert.equal(message.stop_reason, 'tool_use');
  assert.equal(message.usage.output_tokens, 7);
  assert.equal(unparsedInputs.size, 0);
});

test('tool input cut off mid-JSON is kept aside as unparsed', () => {
  const folder = fold([
    start,
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_2', name: 'emit', input: {}, caller: { type: 'direct' } },
    },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"name":"Ad' } },
    { type: 'content_block_stop', index: 0 },
    delta('max_tokens', 3),
    { type: 'message_stop' },
  ]);
  assert.equal(folder.result().unparsedInputs.get('toolu_2'), '{"name":"Ad');
});

test('an error event says whether content had started', () => {
  const error: StreamEvent = {
    type: 'error',
    error: { type: 'overloaded_error', message: 'busy' },
    request_id: 'req_1',
  };
  assert.throws(
    () => fold([start, { type: 'ping' }, error]),
    (thrown: unknown) =>
      thrown instanceof StreamErrorEvent && thrown.beforeContent && thrown.errorType === 'overloaded_error',
  );
  assert.throws(
    () =>
      fold([
        start,
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: null } },
        error,
      ]),
    (thrown: unknown) => thrown instanceof StreamErrorEvent && !thrown.beforeContent,
  );
});

test("an error event's mms_retry_after is its wait; other services' events have none", () => {
  const error = (extras: Record<string, unknown>): StreamEvent =>
    ({ type: 'error', error: { type: 'overloaded_error', message: 'busy' }, request_id: 'req_1', ...extras }) as never;
  const waitOf = (event: StreamEvent): unknown => {
    try {
      fold([start, event]);
    } catch (thrown) {
      return (thrown as StreamErrorEvent).retryAfterSeconds;
    }
    return 'no error';
  };
  assert.equal(waitOf(error({ mms_error_code: 'overloaded', mms_retry_after: 3 })), 3);
  assert.equal(waitOf(error({})), undefined);
  assert.equal(waitOf(error({ mms_retry_after: -1 })), undefined);
  assert.equal(waitOf(error({ mms_retry_after: '3' })), undefined);
});

test('a stream without message_stop, or with events out of order, is a broken stream', () => {
  assert.throws(() => fold([start, delta('tool_use', 1)]).result(), StreamProtocolError);
  assert.throws(() => fold([{ type: 'content_block_stop', index: 0 }]), StreamProtocolError);
});
