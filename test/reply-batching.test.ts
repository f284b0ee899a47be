/**
 * Replies finished in one turn of the event loop are written together at its end
 * (packages/server/src/http/reply-batching.ts): the order kept, none lost, none mixed up.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplyBatching } from '../packages/server/src/http/reply-batching.js';
import { postJson, startService, type RunningService } from '@mms/testing';

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

describe('replies written in batches, through the service', () => {
  let service: RunningService;
  before(async () => {
    service = await startService();
  });
  after(() => service.close());

  test('many requests at once each get their own reply', async () => {
    const texts = Array.from({ length: 40 }, (_, index) => `request number ${index}`);
    const replies = await Promise.all(
      texts.map(async (text) => {
        const response = await postJson(service, '/v1/messages', {
          model: 'mid',
          max_tokens: 50,
          messages: [{ role: 'user', content: text }],
        });
        return { response, body: (await response.json()) as { content: Array<{ type: string; text?: string }> } };
      }),
    );
    const requestIds = new Set<string>();
    replies.forEach(({ response, body }, index) => {
      assert.equal(response.status, 200);
      // The scripted backend echoes the last user turn: each reply carries its own request's text.
      assert.equal(body.content.find((block) => block.type === 'text')?.text, texts[index]);
      requestIds.add(response.headers.get('request-id') ?? '');
    });
    assert.equal(requestIds.size, texts.length);
  });

  test('error replies go out too, among successful ones', async () => {
    const good = { model: 'mid', max_tokens: 50, messages: [{ role: 'user', content: 'fine' }] };
    const bad = { model: 'mid', max_tokens: 50, messages: [] };
    const responses = await Promise.all([good, bad, good, bad].map((body) => postJson(service, '/v1/messages', body)));
    assert.deepEqual(
      responses.map((response) => response.status),
      [200, 400, 200, 400],
    );
  });
});
