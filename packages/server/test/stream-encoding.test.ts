/** The encoder (parts -> events), the fold (events -> message) and partial tool input. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamEvent } from '@model-messages/protocol';
import { MessageEncoder } from '../src/streaming/message-encoder.js';
import { MessageFold } from '../src/streaming/message-fold.js';
import { parsePartialJsonObject } from '../src/streaming/partial-json.js';
import type { StreamPart } from '../src/streaming/stream-part.js';

/** The events of one part. */
function encode(encoder: MessageEncoder, part: StreamPart): StreamEvent[] {
  const events: StreamEvent[] = [];
  encoder.encodeInto(part, events);
  return events;
}

const parts: StreamPart[] = [
  { type: 'block-start', block: { type: 'text', text: '', citations: null } },
  { type: 'block-delta', delta: { type: 'text_delta', text: 'Hi' } },
  { type: 'block-stop' },
  { type: 'block-start', block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {}, caller: { type: 'direct' } } },
  { type: 'block-delta', delta: { type: 'input_json_delta', partial_json: '{"a":' } },
  { type: 'block-delta', delta: { type: 'input_json_delta', partial_json: '[1,2]}' } },
  { type: 'output-tokens', count: 7 },
  { type: 'finish', stopReason: 'tool_use', stopSequence: null },
];

test('parts become indexed events; finish closes an open block and frames the message', () => {
  const encoder = new MessageEncoder({ id: 'msg_1', model: 'm', inputTokens: 3 });
  const events = [encoder.start(), ...parts.flatMap((part) => encode(encoder, part))];
  assert.deepEqual(
    events.map((event) => event.type),
    [
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ],
  );
  assert.deepEqual(
    events.filter((event) => event.type === 'content_block_stop').map((event) => (event as { index: number }).index),
    [0, 1],
  );
  const fold = new MessageFold();
  events.forEach((event) => fold.apply(event));
  const message = fold.result();
  assert.deepEqual(message.content, [
    { type: 'text', text: 'Hi', citations: null },
    { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: [1, 2] }, caller: { type: 'direct' } },
  ]);
  assert.equal(message.stop_reason, 'tool_use');
  assert.equal(message.usage.output_tokens, 7);
  assert.equal(message.usage.input_tokens, 3);
});

test("the engine's own prompt count replaces the up-front one in message_delta and in the folded reply, not in message_start", () => {
  const encoder = new MessageEncoder({ id: 'msg_1', model: 'm', inputTokens: 30 });
  const start = encoder.start();
  const events = [
    start,
    ...encode(encoder, { type: 'input-tokens', count: 26 }),
    ...encode(encoder, { type: 'output-tokens', count: 2 }),
    ...encode(encoder, { type: 'finish', stopReason: 'end_turn', stopSequence: null }),
  ];
  assert.equal(start.type === 'message_start' ? start.message.usage.input_tokens : undefined, 30);
  const delta = events.find((event) => event.type === 'message_delta');
  assert.equal(delta?.type === 'message_delta' ? delta.usage.input_tokens : undefined, 26);
  const fold = new MessageFold();
  events.forEach((event) => fold.apply(event));
  assert.deepEqual([fold.result().usage.input_tokens, fold.result().usage.output_tokens], [26, 2]);
});

test("an engine's cache use reaches message_delta's usage and the folded reply, split as the public API splits it", () => {
  const encoder = new MessageEncoder({ id: 'msg_1', model: 'm', inputTokens: 5_000 });
  const start = encoder.start();
  const events = [
    start,
    ...encode(encoder, { type: 'input-tokens', count: 120, cacheRead: 4_800, cacheCreation: 60 }),
    ...encode(encoder, { type: 'finish', stopReason: 'end_turn', stopSequence: null }),
  ];
  const startUsage = start.type === 'message_start' ? start.message.usage : undefined;
  assert.deepEqual([startUsage?.cache_read_input_tokens, startUsage?.cache_creation_input_tokens], [0, 0]);
  const delta = events.find((event) => event.type === 'message_delta');
  const deltaUsage = delta?.type === 'message_delta' ? delta.usage : undefined;
  assert.deepEqual(
    [deltaUsage?.input_tokens, deltaUsage?.cache_read_input_tokens, deltaUsage?.cache_creation_input_tokens],
    [120, 4_800, 60],
  );
  const fold = new MessageFold();
  events.forEach((event) => fold.apply(event));
  const usage = fold.result().usage;
  assert.deepEqual(
    [usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens],
    [120, 4_800, 60],
  );
  assert.deepEqual(encoder.summary(), {
    stopReason: 'end_turn',
    inputTokens: 120,
    outputTokens: 0,
    cacheReadInputTokens: 4_800,
    cacheCreationInputTokens: 60,
    toolCalls: 0,
    toolCallOutcomes: undefined,
  });
});

test('the encoder refuses parts out of order instead of writing a malformed stream', () => {
  const encoder = new MessageEncoder({ id: 'msg_1', model: 'm', inputTokens: 0 });
  assert.throws(
    () => encode(encoder, { type: 'block-delta', delta: { type: 'text_delta', text: 'x' } }),
    /outside a block/,
  );
  encode(encoder, { type: 'finish', stopReason: 'end_turn', stopSequence: null });
  assert.throws(() => encode(encoder, { type: 'block-stop' }), /after the message finished/);
});

test('cut-off tool input keeps every complete and every cut string value', () => {
  assert.deepEqual(parsePartialJsonObject('{"a": 1, "b": "hel'), { a: 1, b: 'hel' });
  assert.deepEqual(parsePartialJsonObject('{"a": [1, {"b": tr'), { a: [1, {}] });
  assert.deepEqual(parsePartialJsonObject('{"a": "x\\'), { a: 'x' });
  assert.deepEqual(parsePartialJsonObject('{"key'), {});
  assert.deepEqual(parsePartialJsonObject(''), {});
});
