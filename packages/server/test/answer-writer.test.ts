import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { AnswerWriter, MAX_UNREAD_BYTES } from '../src/tools/code-execution/answer-writer.js';

/** A child that never reads: every write stays in the stream's buffer. */
function unreadStream(): Writable {
  return new Writable({ highWaterMark: 1024, write: () => {} });
}

test('a child that reads nothing can leave at most MAX_UNREAD_BYTES unread before it is in breach', () => {
  const stream = unreadStream();
  const breaches: string[] = [];
  const writer = new AnswerWriter(stream, (why) => breaches.push(why));
  const answer = { type: 'result', id: 1, content: 'x'.repeat(100_000) };
  for (let count = 0; count < 100; count += 1) writer.send(answer);
  assert.deepEqual(breaches, [`more than ${MAX_UNREAD_BYTES} bytes of answers left unread`]);
  assert.ok(stream.writableLength <= MAX_UNREAD_BYTES, `${stream.writableLength} bytes held`);
});

test('one answer larger than the cap is written when nothing is waiting: an honest page can be big', () => {
  const stream = unreadStream();
  const breaches: string[] = [];
  new AnswerWriter(stream, (why) => breaches.push(why)).send({ content: 'x'.repeat(MAX_UNREAD_BYTES * 2) });
  assert.deepEqual(breaches, []);
  assert.ok(stream.writableLength > MAX_UNREAD_BYTES * 2);
});

test('a closed writer writes nothing', () => {
  const stream = unreadStream();
  const writer = new AnswerWriter(stream, () => assert.fail('no breach expected'));
  writer.close();
  writer.send({ type: 'result', id: 1, content: 'late' });
  assert.equal(stream.writableLength, 0);
});
