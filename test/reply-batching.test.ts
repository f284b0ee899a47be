/**
 * Replies finished in one turn of the event loop are written together at its end
 * (packages/server/src/http/reply-batching.ts), through the service: none lost, none mixed up,
 * error replies among them. ReplyBatching alone: packages/server/test/reply-batching.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, startService, type RunningService } from '@model-messages/testing';

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
