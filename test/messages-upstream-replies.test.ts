/**
 * The messages-upstream backend, as a client sees it through a front mms in front of another mms:
 * JSON and streamed replies, thinking, tools, server tools run by the front (and what the upstream
 * receives instead), and count_tokens.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  answerCount,
  modelsWithBackend,
  postJson,
  rawUpstream,
  signedTurn,
  sseFrames,
  startService,
  streamOf,
  type RunningService,
} from '@model-messages/testing';
import { innerSignature } from '../packages/server/src/signing/thinking-signature.js';
import {
  hello,
  json,
  LOOKUP,
  startUpstreamPair,
  stream,
  WEB_FETCH,
  withoutIds,
  type Block,
  type UpstreamPair,
} from './messages-upstream-support.js';

let pair: UpstreamPair;
let pagesOrigin: string;
let upstream: RunningService;
let front: RunningService;
before(async () => {
  pair = await startUpstreamPair();
  ({ pagesOrigin, upstream, front } = pair);
});
after(() => pair.close());

describe('replies through an upstream', () => {
  test('a JSON reply has the upstream model content, our own message id and model, and names the backend', async () => {
    const direct = await json(upstream, hello);
    const { response, reply } = await json(front, hello);
    assert.equal(response.headers.get('mms-backend'), 'messages-upstream');
    assert.deepEqual(reply.content, direct.reply.content);
    assert.equal(reply.stop_reason, 'end_turn');
    assert.equal(reply.usage.output_tokens, direct.reply.usage.output_tokens);
    assert.equal(reply.model, 'mid-newer');
    assert.match(reply.id, /^msg_/);
    assert.notEqual(reply.id, direct.reply.id);
  });

  test('a stream is re-framed by our encoder and folds to the JSON reply', async () => {
    const { response, events } = await stream(front, hello);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('mms-backend'), 'messages-upstream');
    const names = events.map((event) => event.event).filter((name) => name !== 'ping');
    assert.equal(names[0], 'message_start');
    assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop']);
    const text = events
      .filter((event) => event.event === 'content_block_delta')
      .map((event) => (event.data.delta as { text?: string }).text ?? '')
      .join('');
    assert.equal(text, 'Hello there, upstream.');
    const { reply } = await json(front, hello);
    const delta = events.find((event) => event.event === 'message_delta')?.data as unknown as {
      usage: { output_tokens: number };
    };
    assert.equal(delta.usage.output_tokens, reply.usage.output_tokens);
  });

  test("thinking comes back signed by the front, with the upstream's signature inside, and goes back to both", async () => {
    const body = { ...hello, thinking: { type: 'adaptive' } };
    const direct = await json(upstream, body);
    const { reply } = await json(front, body);
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['thinking', 'text'],
    );
    assert.equal(reply.content[0]?.thinking, direct.reply.content[0]?.thinking);
    assert.deepEqual(reply.content[1], direct.reply.content[1]);
    const signature = reply.content[0]?.signature ?? '';
    assert.notEqual(signature, direct.reply.content[0]?.signature);
    assert.equal(innerSignature(signature), direct.reply.content[0]?.signature);
    // Sent back, the front checks its own signature and the upstream gets, and checks, its own.
    const messages = [
      ...hello.messages,
      { role: 'assistant', content: reply.content },
      { role: 'user', content: 'More.' },
    ];
    assert.equal((await json(front, { ...body, messages })).reply.stop_reason, 'end_turn');
    const error = await postJson(upstream, '/v1/messages', { ...body, messages });
    assert.equal(error.status, 400, "the front's signature is not the upstream's");
  });

  test('a forced custom tool comes back as tool_use, and the round trip with its result goes on', async () => {
    const body = { ...hello, tools: [LOOKUP], tool_choice: { type: 'tool', name: 'lookup' } };
    const direct = await json(upstream, body);
    const { reply } = await json(front, body);
    assert.equal(reply.stop_reason, 'tool_use');
    assert.deepEqual(withoutIds(reply.content), withoutIds(direct.reply.content));
    const call = reply.content[0];
    assert.equal(call?.type, 'tool_use');
    assert.match(call?.id ?? '', /^toolu_/);
    const next = {
      ...hello,
      tools: [LOOKUP],
      messages: [
        ...hello.messages,
        { role: 'assistant', content: reply.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call?.id, content: 'a small word' }] },
      ],
    };
    const followUp = await json(front, next);
    assert.deepEqual(
      followUp.reply.content.map((block) => block.text),
      ['a small word'],
    );
  });

  test('a tool_result that holds images reaches the upstream as it is: the upstream reads and counts them', async () => {
    const screenshot = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
    const linked = { type: 'image', source: { type: 'url', url: 'https://images.example/shot.png' } };
    const body = (content: unknown[]) => ({
      model: 'mid',
      tools: [LOOKUP],
      messages: [
        ...hello.messages,
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { word: 'a' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] },
      ],
    });
    const withImages = body([{ type: 'text', text: 'shot.png' }, screenshot, linked]);
    const { reply } = await json(front, { ...withImages, max_tokens: 200 });
    assert.deepEqual(
      reply.content.map((block) => block.text),
      ['shot.png'],
    );
    const count = async (service: RunningService, request: unknown) =>
      ((await (await postJson(service, '/v1/messages/count_tokens', request)).json()) as { input_tokens: number })
        .input_tokens;
    const relayed = await count(front, withImages);
    assert.equal(relayed, await count(upstream, withImages));
    assert.ok(relayed > (await count(front, body([{ type: 'text', text: 'shot.png' }]))));
  });

  test('disable_parallel_tool_use keeps one tool call, as on any backend', async () => {
    const body = { ...hello, messages: [{ role: 'user', content: 'two tools' }], tools: [LOOKUP] };
    assert.equal((await json(front, body)).reply.content.length, 2);
    const { reply } = await json(front, { ...body, tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
    assert.deepEqual(
      reply.content.map((block) => block.input),
      [{ word: 'a' }],
    );
    assert.equal(reply.stop_reason, 'tool_use');
  });
});

describe('server tools run in the front service', () => {
  test('the upstream model calls web_fetch as a custom tool; the front fetches and the upstream reads the result', async () => {
    const body = {
      ...hello,
      messages: [{ role: 'user', content: `read the page ${pagesOrigin}/doc` }],
      tools: [WEB_FETCH],
    };
    const { reply } = await json(front, body);
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['text', 'server_tool_use', 'web_fetch_tool_result', 'text'],
    );
    const call = reply.content[1];
    assert.equal(call?.name, 'web_fetch');
    assert.match(call?.id ?? '', /^srvtoolu_/);
    assert.deepEqual(call?.input, { url: `${pagesOrigin}/doc` });
    // Only the front may reach loopback (allowNetworks), so this page was fetched by the front.
    assert.equal(reply.content[2]?.tool_use_id, call?.id);
    assert.match(JSON.stringify(reply.content[2]?.content), /the text of \/doc/);
    assert.equal(reply.content[3]?.text, 'The page is read.');
    assert.equal(reply.stop_reason, 'end_turn');
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 1 });
  });

  test('the same turn streams, server blocks included', async () => {
    const body = {
      ...hello,
      messages: [{ role: 'user', content: `read the page ${pagesOrigin}/doc` }],
      tools: [WEB_FETCH],
    };
    const { events } = await stream(front, body);
    const starts = events
      .filter((event) => event.event === 'content_block_start')
      .map((event) => (event.data.content_block as { type: string }).type);
    assert.deepEqual(starts, ['text', 'server_tool_use', 'web_fetch_tool_result', 'text']);
    assert.equal(events.at(-1)?.event, 'message_stop');
  });

  test('what the upstream receives: server tools as custom tools, never a server tool or server block', async () => {
    const seen = await rawUpstream(
      (request, response) =>
        answerCount(request, response) ||
        void response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames(streamOf('ok'))),
    );
    const relay = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: seen.baseURL }),
    });
    try {
      // A paused turn as the relay would have returned it.
      const ask = { role: 'user' as const, content: `read the page ${pagesOrigin}/doc` };
      const turn = signedTurn(
        relay.signer,
        [
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_fetch', input: { url: `${pagesOrigin}/doc` } },
          {
            type: 'web_fetch_tool_result',
            tool_use_id: 'srvtoolu_1',
            content: { type: 'web_fetch_result', url: `${pagesOrigin}/doc` },
          },
        ],
        [ask],
      );
      const id = turn[0]!.type === 'server_tool_use' ? turn[0]!.id : '';
      const messages = [ask, { role: 'assistant', content: turn }];
      await json(relay, { ...hello, messages, tools: [WEB_FETCH, LOOKUP] });
      for (const path of ['/v1/messages/count_tokens', '/v1/messages']) {
        const sent = seen.requests.find((entry) => entry.path === path)?.body as {
          tools: Array<{ name: string; type?: string; input_schema?: unknown }>;
          messages: Array<{ role: string; content: Block[] }>;
        };
        assert.deepEqual(
          sent.tools.map((tool) => [tool.name, tool.type, typeof tool.input_schema]),
          [
            ['web_fetch', undefined, 'object'],
            ['lookup', undefined, 'object'],
          ],
          path,
        );
        // The paused turn sent back becomes a client tool round trip, ending on the user turn.
        assert.deepEqual(
          sent.messages.map((message) => message.role),
          ['user', 'assistant', 'user'],
          path,
        );
        assert.deepEqual(sent.messages[1]?.content, [
          { type: 'tool_use', id, name: 'web_fetch', input: { url: `${pagesOrigin}/doc` } },
        ]);
        assert.equal(sent.messages[2]?.content[0]?.type, 'tool_result');
        assert.equal(sent.messages[2]?.content[0]?.tool_use_id, id);
        assert.ok(!JSON.stringify(sent).includes('server_tool_use'), path);
      }
      const sent = seen.requests.find((entry) => entry.path === '/v1/messages');
      assert.equal((sent?.body as { stream: boolean }).stream, true);
      assert.equal(sent?.headers['anthropic-version'], '2023-06-01');
    } finally {
      await relay.close();
      await seen.close();
    }
  });
});

describe('count_tokens', () => {
  test('is the upstream count, on the count endpoint and in message_start', async () => {
    const body = { model: 'mid', messages: hello.messages, tools: [LOOKUP] };
    const direct = (await (await postJson(upstream, '/v1/messages/count_tokens', body)).json()) as {
      input_tokens: number;
    };
    const relayed = (await (await postJson(front, '/v1/messages/count_tokens', body)).json()) as {
      input_tokens: number;
    };
    assert.ok(direct.input_tokens > 0);
    assert.equal(relayed.input_tokens, direct.input_tokens);
    const { events } = await stream(front, { ...hello, tools: [LOOKUP] });
    const start = events[0]?.data as unknown as { message: { usage: { input_tokens: number } } };
    assert.equal(start.message.usage.input_tokens, direct.input_tokens);
  });
});
