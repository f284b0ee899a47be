/**
 * The one SSE parser (client, Messages upstream backend, OpenAI-compatible backend): framing
 * across arbitrary chunk boundaries, the three line ends, llama.cpp's `error:` lines, and the
 * end of the stream. Callers that get bytes decode them with a streaming TextDecoder, as here.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser, type SseFrame } from '@model-messages/protocol';

/** Feeds the text cut at `cuts`, the way a caller feeds chunks. */
function feed(parser: SseParser, text: string, cuts: number[]): SseFrame[] {
  const frames: SseFrame[] = [];
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    frames.push(...parser.push(text.slice(from, cut)));
    from = cut;
  }
  return frames;
}

describe('framing', () => {
  test('frames split anywhere across chunks come out whole', () => {
    const text = 'event: message_start\ndata: {"a":1}\n\nevent: ping\ndata: {"type": "ping"}\n\n';
    for (let cut = 1; cut < text.length; cut += 1) {
      const parser = new SseParser();
      assert.deepEqual(
        feed(parser, text, [cut]),
        [
          { event: 'message_start', data: '{"a":1}' },
          { event: 'ping', data: '{"type": "ping"}' },
        ],
        `cut at ${cut}`,
      );
      assert.equal(parser.hasPartialFrame, false);
    }
  });

  test('every line end, cut at every position, gives the same frames', () => {
    const frames = ': keep-alive\nevent: a\ndata: one\ndata: two\n\ndata:three\n\nid: 7\nretry: 10\ndata\n\n';
    const expected = [
      { event: 'a', data: 'one\ntwo' },
      { event: 'message', data: 'three' },
      { event: 'message', data: '' },
    ];
    for (const end of ['\n', '\r\n', '\r']) {
      const text = frames.replaceAll('\n', end);
      for (let cut = 0; cut <= text.length; cut += 1) {
        const parser = new SseParser();
        assert.deepEqual(feed(parser, text, [cut]), expected, `${JSON.stringify(end)} cut at ${cut}`);
        assert.equal(parser.hasPartialFrame, false);
      }
    }
  });

  test('CRLF and CR line ends, a CRLF split across chunks, comments and multi-line data', () => {
    const parser = new SseParser();
    const frames = [
      ...parser.push(': keep-alive\r\nevent: a\r\ndata: one\r'),
      ...parser.push('\ndata: two\r\r'),
      ...parser.push('data:three\n\n'),
    ];
    assert.deepEqual(frames, [
      { event: 'a', data: 'one\ntwo' },
      { event: 'message', data: 'three' },
    ]);
  });

  test('a CRLF split across chunks with an empty chunk between is still one line end', () => {
    const parser = new SseParser();
    const frames = [...parser.push('data: one\r'), ...parser.push(''), ...parser.push('\ndata: two\n\n')];
    assert.deepEqual(frames, [{ event: 'message', data: 'one\ntwo' }]);
  });

  test('a frame ended by a CR at the end of a chunk goes out at once', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('data: x\r\r'), [{ event: 'message', data: 'x' }]);
    assert.deepEqual(parser.push('\ndata: y\n\n'), [{ event: 'message', data: 'y' }]);
  });

  test('one space after the colon is dropped, a second one kept', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('event:e\ndata:  two spaces\n\n'), [{ event: 'e', data: ' two spaces' }]);
  });

  test('an event with no data is not dispatched, and its name does not carry over', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('event: ping\n\ndata: x\n\n'), [{ event: 'message', data: 'x' }]);
  });
});

describe('bytes decoded by the caller', () => {
  const frames =
    'event: ping\ndata: {"type": "ping"}\n\n: a comment\nevent: message_delta\ndata: {"a":\ndata: "ü"}\n\n';

  test('the same frames whatever the chunking, with UTF-8 split across chunks', () => {
    const bytes = Buffer.from(frames);
    for (const size of [1, 2, 3, 5, bytes.length]) {
      const parser = new SseParser();
      const decoder = new TextDecoder('utf-8');
      const events: SseFrame[] = [];
      for (let offset = 0; offset < bytes.length; offset += size)
        events.push(...parser.push(decoder.decode(bytes.subarray(offset, offset + size), { stream: true })));
      assert.deepEqual(
        events,
        [
          { event: 'ping', data: '{"type": "ping"}' },
          { event: 'message_delta', data: '{"a":\n"ü"}' },
        ],
        `chunks of ${size}`,
      );
      assert.equal(parser.hasPartialFrame, false);
    }
  });

  test('CRLF and CR line ends, a CRLF split across chunks included', () => {
    for (const end of ['\r\n', '\r']) {
      const text = frames.replaceAll('\n', end);
      const parser = new SseParser();
      const decoder = new TextDecoder('utf-8');
      const middle = text.indexOf('\r') + 1;
      const events = [
        ...parser.push(decoder.decode(Buffer.from(text.slice(0, middle)), { stream: true })),
        ...parser.push(decoder.decode(Buffer.from(text.slice(middle)), { stream: true })),
      ];
      assert.deepEqual(
        events.map((event) => event.event),
        ['ping', 'message_delta'],
      );
    }
  });
});

describe("llama.cpp's error lines", () => {
  test('frames split every 3 characters, CRLF lines, comments, multi-line data and an error', () => {
    const parser = new SseParser();
    const text =
      ': keep-alive\r\ndata: {"a":1}\r\n\r\ndata: line one\ndata: line two\n\nerror: {"code":500}\n\ndata: [DONE]\n\n';
    const frames: SseFrame[] = [];
    for (let at = 0; at < text.length; at += 3) frames.push(...parser.push(text.slice(at, at + 3)));
    frames.push(...parser.end());
    assert.deepEqual(frames, [
      { event: 'message', data: '{"a":1}' },
      { event: 'message', data: 'line one\nline two' },
      { event: 'message', data: '', error: '{"code":500}' },
      { event: 'message', data: '[DONE]' },
    ]);
  });

  test('error lines join like data lines and stay apart from the data of their frame', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('data: d\nerror: one\nerror:two\n\n'), [
      { event: 'message', data: 'd', error: 'one\ntwo' },
    ]);
  });

  test('an error line alone is a partial frame until its blank line', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('error: {}\n'), []);
    assert.equal(parser.hasPartialFrame, true);
    assert.deepEqual(parser.end(), [{ event: 'message', data: '', error: '{}' }]);
  });
});

describe('the end of the stream', () => {
  test('a frame with no blank line after it is not delivered by push, and is partial', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('event: message_stop\ndata: {}\n'), []);
    assert.equal(parser.hasPartialFrame, true);
  });

  test('a stream stopped inside a frame is partial, whatever part of it arrived', () => {
    for (const text of ['event: ping\ndata: {}\n', 'event: ping\n', 'data: {', 'error: x\n']) {
      const parser = new SseParser();
      parser.push(text);
      assert.equal(parser.hasPartialFrame, true, JSON.stringify(text));
    }
    const parser = new SseParser();
    parser.push(': only a comment\n');
    assert.equal(parser.hasPartialFrame, false);
  });

  test('end() flushes a frame the stream closed on without a blank line', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('data: {"b":2}'), []);
    assert.deepEqual(parser.end(), [{ event: 'message', data: '{"b":2}' }]);
    assert.equal(parser.hasPartialFrame, false);
  });

  test('end() after a CR, or with nothing pending, gives what is left and nothing more', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('event: e\rdata: x\r'), []);
    assert.deepEqual(parser.end(), [{ event: 'e', data: 'x' }]);
    assert.deepEqual(parser.end(), []);
  });
});
