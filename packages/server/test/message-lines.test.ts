import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageLines } from '../src/tools/code-execution/message-lines.js';

function reader(maxLineBytes = 64) {
  const messages: unknown[] = [];
  const breaches: string[] = [];
  const lines = new MessageLines(
    maxLineBytes,
    (message) => messages.push(message),
    (why) => breaches.push(why),
  );
  return { lines, messages, breaches };
}

test('lines split across chunks, a character split across chunks included, arrive whole', () => {
  const { lines, messages, breaches } = reader();
  const bytes = Buffer.from('{"a":1}\n{"text":"ä€"}\n');
  // 18 is inside ä (bytes 17-18), 20 inside € (bytes 19-21).
  const cuts = [0, 3, 18, 20, bytes.length];
  for (let index = 0; index + 1 < cuts.length; index += 1) lines.push(bytes.subarray(cuts[index], cuts[index + 1]));
  assert.deepEqual(messages, [{ a: 1 }, { text: 'ä€' }]);
  assert.deepEqual(breaches, []);
});

test('a line past the cap is one breach, even before its end arrives, and nothing after it is parsed', () => {
  const { lines, messages, breaches } = reader(16);
  lines.push(Buffer.from('{"a":1}\n{"long":"'));
  lines.push(Buffer.from('x'.repeat(20)));
  lines.push(Buffer.from('"}\n{"b":2}\n'));
  assert.deepEqual(messages, [{ a: 1 }]);
  assert.deepEqual(breaches, ['a message longer than 16 bytes']);
});

test('a line that is not JSON is a breach, and the rest of its chunk is not parsed', () => {
  const { lines, messages, breaches } = reader();
  lines.push(Buffer.from('{"a":1}\nnope\n{"b":2}\n'));
  assert.deepEqual(messages, [{ a: 1 }]);
  assert.deepEqual(breaches, ['a message that is not JSON']);
});

test('once stopped by its owner (a kill), the rest of the chunk is not parsed', () => {
  const messages: unknown[] = [];
  const lines: MessageLines = new MessageLines(
    64,
    (message) => {
      messages.push(message);
      lines.stop();
    },
    () => assert.fail('no breach expected'),
  );
  lines.push(Buffer.from('{"a":1}\n{"b":2}\n{"c":3}\n'));
  assert.deepEqual(messages, [{ a: 1 }]);
});
