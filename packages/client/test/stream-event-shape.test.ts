/** What a 2xx stream's bytes must be before they are read as a message (issue 32). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamProtocolError } from '../src/transport/message-folder.js';
import { holdsForeignLines, readStreamEvent } from '../src/transport/stream-event-shape.js';

test('events without the fields the folder reads are protocol errors naming what is missing; data that is not JSON is a SyntaxError', () => {
  for (const [data, problem] of [
    ['null', /^an event that is not an object with a type: null$/],
    ['{"type": "message_start", "message": {"id": "m"}}', /^a message_start without a message and its usage/],
    ['{"type": "content_block_start", "index": 0}', /^a content_block_start without a typed content block/],
    ['{"type": "content_block_delta", "delta": {"type": "text_delta"}}', /^a text_delta without its text/],
    ['{"type": "message_delta", "usage": {}}', /^a message_delta without its delta/],
    ['{"type": "error", "error": "boom"}', /^an error event without a typed error/],
  ] as const) {
    assert.throws(
      () => readStreamEvent(data),
      (error: unknown) => error instanceof StreamProtocolError && problem.test(error.message),
      data,
    );
  }
  assert.throws(() => readStreamEvent('{"type": "message_st'), SyntaxError);
  assert.deepEqual(readStreamEvent('{"type": "ping"}'), { type: 'ping' });
});

test('lines that are no part of an event stream are foreign; SSE fields, comments and a line still arriving are not', () => {
  assert.equal(holdsForeignLines('<html>\n<body>Bad gateway</body>\n', false), true);
  assert.equal(holdsForeignLines('<html>Bad gateway</html>', true), true, 'the whole body: its last line counts');
  assert.equal(holdsForeignLines('<html>Bad gat', false), false, 'a line still arriving does not count');
  assert.equal(holdsForeignLines(': keep-alive\n\nevent: message_start\ndata: {"type": "message_st', true), false);
  assert.equal(holdsForeignLines('retry: 1000\nid: 7\n\n', true), false);
});
