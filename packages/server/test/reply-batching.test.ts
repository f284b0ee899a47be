/**
 * ReplyBatching (reply-batching.ts): writes deferred in one turn of the event loop go out
 * together at its end, in their order, and one that throws is reported without losing the rest.
 * Replies written in batches through the service: test/reply-batching.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplyBatching } from '../src/http/reply-batching.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function unexpectedError(error: unknown): never {
  throw new Error(`no write should fail here: ${String(error)}`);
}

describe('ReplyBatching', () => {
  test('writes wait for the end of the turn, after its ticks and microtasks, and keep their order', async () => {
    const batching = new ReplyBatching(unexpectedError);
    const order: string[] = [];
    batching.defer(() => order.push('first reply'));
    const tick = new Promise<void>((resolve) => process.nextTick(() => resolve(void order.push('tick'))));
    batching.defer(() => order.push('second reply'));
    await Promise.resolve();
    order.push('microtask');
    await tick;
    assert.deepEqual(order.sort(), ['microtask', 'tick']);
    await nextTurn();
    assert.deepEqual(order, ['microtask', 'tick', 'first reply', 'second reply']);
  });

  test('a write deferred while a batch is written goes out in the next turn', async () => {
    const batching = new ReplyBatching(unexpectedError);
    const order: string[] = [];
    batching.defer(() => {
      order.push('first batch');
      batching.defer(() => order.push('second batch'));
    });
    await nextTurn();
    assert.deepEqual(order, ['first batch']);
    await nextTurn();
    assert.deepEqual(order, ['first batch', 'second batch']);
  });

  test('a write that throws is reported, and the writes after it still go out', async () => {
    const reported: unknown[] = [];
    const batching = new ReplyBatching((error) => reported.push(error));
    const written: string[] = [];
    batching.defer(() => written.push('before'));
    batching.defer(() => {
      throw new Error('socket gone');
    });
    batching.defer(() => written.push('after'));
    await nextTurn();
    assert.deepEqual(written, ['before', 'after']);
    assert.equal(reported.length, 1);
    assert.match(String(reported[0]), /socket gone/);
  });
});
