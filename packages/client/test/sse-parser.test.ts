import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser } from '@mms/client';

test('frames split anywhere across chunks come out whole', () => {
  const text = 'event: message_start\ndata: {"a":1}\n\nevent: ping\ndata: {"type": "ping"}\n\n';
  for (let cut = 1; cut < text.length; cut += 1) {
    const parser = new SseParser();
    const frames = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))];
    assert.deepEqual(frames, [{ event: 'message_start', data: '{"a":1}' }, { event: 'ping', data: '{"type": "ping"}' }], `cut at ${cut}`);
  }
});

test('CRLF and CR line ends, a CRLF split across chunks, comments and multi-line data', () => {
  const parser = new SseParser();
  const frames = [...parser.push(': keep-alive\r\nevent: a\r\ndata: one\r'), ...parser.push('\ndata: two\r\r'), ...parser.push('data:three\n\n')];
  assert.deepEqual(frames, [{ event: 'a', data: 'one\ntwo' }, { event: 'message', data: 'three' }]);
});

test('a frame with no blank line after it is not delivered', () => {
  const parser = new SseParser();
  assert.deepEqual(parser.push('event: message_stop\ndata: {}\n'), []);
});
