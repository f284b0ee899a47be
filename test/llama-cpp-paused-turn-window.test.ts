/**
 * A paused turn on the embedded engine always fits its model's window when it is sent back
 * (issue 32). The turn's server tool results share the window's headroom (agent/context-budget.ts);
 * counted at 4 characters a token, a page whose text takes more tokens than that filled more than
 * the headroom, and the paused turn sent back was a 400 "prompt is too long". The embedded engine
 * counts results in its own tokens.
 *
 * A tiny scripted model (packages/testing/src/gguf/) fetches a page of 200,000 `x`s as its forced
 * call; the service pauses after that one step (maxSteps 1), and the turn goes back as the
 * request's last assistant message.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  postJson,
  qwenTurnPieces,
  scriptedQwenModel,
  startPageServer,
  startService,
  type PageServer,
  type RunningService,
} from '@model-messages/testing';

const CONTEXT_WINDOW = 1024;

let pages: PageServer;
let service: RunningService;
before(async () => {
  pages = await startPageServer();
  const url = `${pages.origin}/huge`;
  const fetcher = await scriptedQwenModel(qwenTurnPieces({ text: ['{"url": "', url, '"}'] }));
  service = await startService({
    models: [
      {
        id: 'fetcher',
        tier: 'mid',
        generation: 'older',
        contextWindow: CONTEXT_WINDOW,
        maxOutputTokens: 256,
        backend: { type: 'llama-cpp', model: fetcher, threads: 1, chatWrapper: 'qwen' },
      },
    ],
    maxSteps: 1,
    serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'], maxBytes: 50_000 } },
  });
});
after(async () => {
  await service.close();
  pages.close();
});

interface Reply {
  content: Array<{ type: string; content?: { content?: { source?: { data?: string } } } }>;
  stop_reason: string;
  error?: { message: string };
}

test('a turn paused after a fetch of a page denser in tokens than 4 characters each fits the window when sent back', async () => {
  const request = {
    model: 'fetcher',
    max_tokens: 64,
    temperature: 0,
    tools: [{ type: 'web_fetch_20260209', name: 'web_fetch', max_uses: 1 }],
    tool_choice: { type: 'tool', name: 'web_fetch' },
    messages: [{ role: 'user', content: `Read ${pages.origin}/huge` }],
  };
  const paused = await postJson(service, '/v1/messages', request);
  const turn = (await paused.json()) as Reply;
  assert.equal(paused.status, 200, JSON.stringify(turn));
  assert.equal(turn.stop_reason, 'pause_turn');
  const page = turn.content.find((block) => block.type === 'web_fetch_tool_result');
  assert.ok((page?.content?.content?.source?.data?.length ?? 0) > 100, 'the page was fetched, cut to its share');

  const resumed = await postJson(service, '/v1/messages', {
    ...request,
    messages: [...request.messages, { role: 'assistant', content: turn.content }],
  });
  const reply = (await resumed.json()) as Reply;
  assert.equal(resumed.status, 200, JSON.stringify(reply.error));
});
