/**
 * The messages-upstream backend: mms in front of another mms (scripted models, faults on),
 * over HTTP on loopback, as a client sees it. JSON and streams, tools, thinking, server tools
 * run by the front, upstream errors kept (statuses and mid-stream error events), count_tokens,
 * a client that leaves closing the upstream connection, and the start-up reachability check.
 * Exact upstream failures come from small raw servers (upstream-support.ts).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, readSse, scriptedModels, startService, type RunningService, type SseEvent } from '@mms/testing';
import { answerCount, closedPortURL, errorEnvelope, modelsWithBackend, rawUpstream, sseFrames, streamOf, streamOpening, type RawUpstream } from './upstream-support.js';

interface Block {
  type: string;
  id?: string;
  name?: string;
  text?: string;
  thinking?: string;
  signature?: string;
  input?: Record<string, unknown>;
  tool_use_id?: string;
  content?: unknown;
}

interface Reply {
  id: string;
  model: string;
  content: Block[];
  stop_reason: string;
  usage: { input_tokens: number; output_tokens: number; server_tool_use: { web_search_requests: number; web_fetch_requests: number } | null };
}

interface ErrorBody {
  type: string;
  error: { type: string; message: string };
}

let pages: Server;
let pagesOrigin: string;
let upstream: RunningService;
let front: RunningService;

const LOOKUP = { name: 'lookup', description: 'Look a word up.', input_schema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'], additionalProperties: false } };
const WEB_FETCH = { type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'], max_uses: 3 };

/** The upstream's script: its model calls web_fetch (a custom tool to it), then answers. */
function writeScript(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'mms-upstream-')), 'script.json');
  const script = [
    { when: '^read the page', steps: [[{ type: 'text', text: 'Fetching.' }, { type: 'tool_use', name: 'web_fetch', input: { url: `${pagesOrigin}/doc` } }], [{ type: 'text', text: 'The page is read.' }]] },
    { when: '^two tools$', steps: [[{ type: 'tool_use', name: 'lookup', input: { word: 'a' } }, { type: 'tool_use', name: 'lookup', input: { word: 'b' } }]] },
  ];
  writeFileSync(path, JSON.stringify(script));
  return path;
}

before(async () => {
  pages = createServer((request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end(`the text of ${request.url}`));
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagesOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  upstream = await startService({ models: scriptedModels({ script: writeScript(), faults: true }) });
  front = await startService({
    models: modelsWithBackend({ type: 'messages-upstream', baseURL: upstream.baseURL, apiKey: upstream.apiKey, forwardFaults: true }),
    serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'] } },
  });
});

after(async () => {
  await front.close();
  await upstream.close();
  pages.closeAllConnections();
  pages.close();
});

const hello = { model: 'mid', max_tokens: 200, messages: [{ role: 'user', content: 'Hello there, upstream.' }] };

async function json(service: RunningService, body: unknown, headers: Record<string, string> = {}): Promise<{ response: Response; reply: Reply }> {
  const response = await postJson(service, '/v1/messages', body, headers);
  assert.equal(response.status, 200, await response.clone().text());
  return { response, reply: (await response.json()) as Reply };
}

async function stream(service: RunningService, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ response: Response; events: SseEvent[] }> {
  const response = await postJson(service, '/v1/messages', { ...body, stream: true }, headers);
  return { response, events: await readSse(response) };
}

/** Content without the ids each service makes up itself. */
function withoutIds(blocks: Block[]): Block[] {
  return blocks.map(({ id: _id, ...rest }) => rest);
}

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
    const delta = events.find((event) => event.event === 'message_delta')?.data as unknown as { usage: { output_tokens: number } };
    assert.equal(delta.usage.output_tokens, reply.usage.output_tokens);
  });

  test('thinking comes back as thinking blocks with their signatures', async () => {
    const body = { ...hello, thinking: { type: 'adaptive' } };
    const direct = await json(upstream, body);
    const { reply } = await json(front, body);
    assert.deepEqual(reply.content.map((block) => block.type), ['thinking', 'text']);
    assert.deepEqual(reply.content, direct.reply.content);
    assert.ok((reply.content[0]?.signature ?? '').length > 0);
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
      messages: [...hello.messages, { role: 'assistant', content: reply.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call?.id, content: 'a small word' }] }],
    };
    const followUp = await json(front, next);
    assert.deepEqual(followUp.reply.content.map((block) => block.text), ['a small word']);
  });

  test('disable_parallel_tool_use keeps one tool call, as on any backend', async () => {
    const body = { ...hello, messages: [{ role: 'user', content: 'two tools' }], tools: [LOOKUP] };
    assert.equal((await json(front, body)).reply.content.length, 2);
    const { reply } = await json(front, { ...body, tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
    assert.deepEqual(reply.content.map((block) => block.input), [{ word: 'a' }]);
    assert.equal(reply.stop_reason, 'tool_use');
  });
});

describe('server tools run in the front service', () => {
  test('the upstream model calls web_fetch as a custom tool; the front fetches and the upstream reads the result', async () => {
    const body = { ...hello, messages: [{ role: 'user', content: `read the page ${pagesOrigin}/doc` }], tools: [WEB_FETCH] };
    const { reply } = await json(front, body);
    assert.deepEqual(reply.content.map((block) => block.type), ['text', 'server_tool_use', 'web_fetch_tool_result', 'text']);
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
    const body = { ...hello, messages: [{ role: 'user', content: `read the page ${pagesOrigin}/doc` }], tools: [WEB_FETCH] };
    const { events } = await stream(front, body);
    const starts = events.filter((event) => event.event === 'content_block_start').map((event) => (event.data.content_block as { type: string }).type);
    assert.deepEqual(starts, ['text', 'server_tool_use', 'web_fetch_tool_result', 'text']);
    assert.equal(events.at(-1)?.event, 'message_stop');
  });

  test('what the upstream receives: server tools as custom tools, never a server tool or server block', async () => {
    const seen = await rawUpstream((request, response) => answerCount(request, response) || void response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames(streamOf('ok'))));
    const relay = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: seen.baseURL }) });
    try {
      const turn = [
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_fetch', input: { url: `${pagesOrigin}/doc` } },
        { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'web_fetch_result', url: `${pagesOrigin}/doc` } },
      ];
      const messages = [{ role: 'user', content: `read the page ${pagesOrigin}/doc` }, { role: 'assistant', content: turn }];
      await json(relay, { ...hello, messages, tools: [WEB_FETCH, LOOKUP] });
      for (const path of ['/v1/messages/count_tokens', '/v1/messages']) {
        const sent = seen.requests.find((entry) => entry.path === path)?.body as { tools: Array<{ name: string; type?: string; input_schema?: unknown }>; messages: Array<{ role: string; content: Block[] }> };
        assert.deepEqual(sent.tools.map((tool) => [tool.name, tool.type, typeof tool.input_schema]), [['web_fetch', undefined, 'object'], ['lookup', undefined, 'object']], path);
        // The paused turn sent back becomes a client tool round trip, ending on the user turn.
        assert.deepEqual(sent.messages.map((message) => message.role), ['user', 'assistant', 'user'], path);
        assert.deepEqual(sent.messages[1]?.content, [{ type: 'tool_use', id: 'srvtoolu_1', name: 'web_fetch', input: { url: `${pagesOrigin}/doc` } }]);
        assert.equal(sent.messages[2]?.content[0]?.type, 'tool_result');
        assert.equal(sent.messages[2]?.content[0]?.tool_use_id, 'srvtoolu_1');
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

describe('errors from the upstream keep their type and message', () => {
  for (const [fault, status, type] of [
    ['http-500', 500, 'api_error'],
    ['http-529', 529, 'overloaded_error'],
    ['http-429', 429, 'rate_limit_error'],
  ] as const) {
    test(`${fault}: ${status} ${type}, retry-after where the upstream sent one`, async () => {
      const response = await postJson(front, '/v1/messages', hello, { 'mms-fault': fault });
      assert.equal(response.status, status);
      const body = (await response.json()) as ErrorBody;
      assert.deepEqual(body.error, { type, message: `Injected fault: ${fault}` });
      assert.equal(response.headers.get('retry-after'), status === 500 ? null : '1');
    });
  }

  test('an error event after output stays an error event after that output, with its type and message', async () => {
    const { response, events } = await stream(front, hello, { 'mms-fault': 'stream-error' });
    assert.equal(response.status, 200);
    const names = events.map((event) => event.event).filter((name) => name !== 'ping');
    assert.deepEqual(names, ['message_start', 'content_block_start', 'content_block_delta', 'error']);
    assert.deepEqual(events.at(-1)?.data.error, { type: 'api_error', message: 'Injected fault: stream-error' });
  });

  test('our rules run first: a refused request never reaches the upstream', async () => {
    const seen = await rawUpstream((_request, response) => response.writeHead(500).end());
    const relay = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: seen.baseURL }) });
    try {
      const strict = { ...LOOKUP, strict: true, input_schema: { ...LOOKUP.input_schema, properties: { word: { type: 'string', maxLength: 3 } } } };
      const response = await postJson(relay, '/v1/messages', { ...hello, tools: [strict] });
      assert.equal(response.status, 400);
      assert.match(((await response.json()) as ErrorBody).error.message, /maxLength/);
      assert.equal(seen.requests.length, 0);
    } finally {
      await relay.close();
      await seen.close();
    }
  });

  describe('exact failures from a raw upstream', () => {
    let raw: RawUpstream;
    let relay: RunningService;
    /** What the raw upstream does next, chosen per test. */
    let answer: (response: ServerResponse) => void;

    before(async () => {
      raw = await rawUpstream((request, response) => answerCount(request, response) || answer(response));
      relay = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: raw.baseURL, apiKey: 'upstream-key-123' }) });
    });
    after(async () => {
      await relay.close();
      await raw.close();
    });

    test('a 400 envelope comes back as the same 400 and message', async () => {
      answer = (response) => response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(errorEnvelope('invalid_request_error', 'messages.0: upstream says no')));
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 400);
      assert.deepEqual(((await response.json()) as ErrorBody).error, { type: 'invalid_request_error', message: 'messages.0: upstream says no' });
    });

    test("a 401 is about this service's upstream key, not the caller's: a 500 naming the key", async () => {
      answer = (response) => response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify(errorEnvelope('authentication_error', 'invalid x-api-key')));
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 500);
      const error = ((await response.json()) as ErrorBody).error;
      assert.equal(error.type, 'api_error');
      assert.match(error.message, /authentication_error.*invalid x-api-key.*apiKey/);
    });

    test('a 529 with its own retry-after keeps it', async () => {
      answer = (response) => response.writeHead(529, { 'content-type': 'application/json', 'retry-after': '7' }).end(JSON.stringify(errorEnvelope('overloaded_error', 'busy upstream')));
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 529);
      assert.equal(response.headers.get('retry-after'), '7');
      assert.deepEqual(((await response.json()) as ErrorBody).error, { type: 'overloaded_error', message: 'busy upstream' });
    });

    test('an overloaded_error event mid-stream is relayed as that error event', async () => {
      answer = (response) => response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames([...streamOpening('Half'), errorEnvelope('overloaded_error', 'Overloaded midway')]));
      const { events } = await stream(relay, hello);
      assert.equal(events.at(-1)?.event, 'error');
      assert.deepEqual(events.at(-1)?.data.error, { type: 'overloaded_error', message: 'Overloaded midway' });
      assert.ok(events.some((event) => event.event === 'content_block_delta'));
    });

    test('a stream cut before message_stop is an error, never a finished message', async () => {
      answer = (response) => response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames(streamOpening('Cut')));
      const { events } = await stream(relay, hello);
      assert.equal(events.at(-1)?.event, 'error');
      assert.match(String((events.at(-1)?.data.error as { message: string }).message), /ended before message_stop/);
      assert.ok(!events.some((event) => event.event === 'message_stop'));
    });

    test('events split anywhere across chunks, CRLF line ends included, parse the same', async () => {
      answer = (response) => {
        const text = sseFrames(streamOf('Split über chunks')).replaceAll('\n', '\r\n');
        const bytes = Buffer.from(text);
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        let offset = 0;
        const step = () => {
          if (offset >= bytes.length) return void response.end();
          response.write(bytes.subarray(offset, offset + 7));
          offset += 7;
          setImmediate(step);
        };
        step();
      };
      const { reply } = await json(relay, hello);
      assert.deepEqual(reply.content.map((block) => block.text), ['Split über chunks']);
    });

    test('the upstream key goes as x-api-key, with the version header', async () => {
      answer = (response) => response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames(streamOf('ok')));
      await json(relay, hello);
      const sent = raw.requests.at(-1);
      assert.equal(sent?.path, '/v1/messages');
      assert.equal(sent?.headers['x-api-key'], 'upstream-key-123');
      assert.equal(sent?.headers['anthropic-version'], '2023-06-01');
    });
  });

  test('connection refused is a 500 api_error naming the cause', async () => {
    const relay = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: await closedPortURL() }) });
    try {
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 500);
      const error = ((await response.json()) as ErrorBody).error;
      assert.equal(error.type, 'api_error');
      assert.match(error.message, /ECONNREFUSED/);
    } finally {
      await relay.close();
    }
  });

  test('an upstream with no output within firstByteTimeoutMs is a 504 timeout_error', async () => {
    // Headers and message_start, then nothing: no output.
    const silent = await rawUpstream((request, response) => answerCount(request, response) || void response.writeHead(200, { 'content-type': 'text/event-stream' }).write(sseFrames(streamOpening('x').slice(0, 1))));
    const relay = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: silent.baseURL, firstByteTimeoutMs: 200 }) });
    try {
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 504);
      const error = ((await response.json()) as ErrorBody).error;
      assert.equal(error.type, 'timeout_error');
      assert.match(error.message, /firstByteTimeoutMs/);
    } finally {
      await relay.close();
      await silent.close();
    }
  });
});

describe('count_tokens', () => {
  test('is the upstream count, on the count endpoint and in message_start', async () => {
    const body = { model: 'mid', messages: hello.messages, tools: [LOOKUP] };
    const direct = (await (await postJson(upstream, '/v1/messages/count_tokens', body)).json()) as { input_tokens: number };
    const relayed = (await (await postJson(front, '/v1/messages/count_tokens', body)).json()) as { input_tokens: number };
    assert.ok(direct.input_tokens > 0);
    assert.equal(relayed.input_tokens, direct.input_tokens);
    const { events } = await stream(front, { ...hello, tools: [LOOKUP] });
    const start = events[0]?.data as unknown as { message: { usage: { input_tokens: number } } };
    assert.equal(start.message.usage.input_tokens, direct.input_tokens);
  });
});

describe('cancellation', () => {
  // The time limits only keep a broken build from hanging the run: they time nothing.
  test('a client that leaves mid-stream closes the upstream connection', { timeout: 20_000 }, async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => {
      upstreamClosed = resolve;
    });
    const endless = await rawUpstream((request, response) => {
      if (answerCount(request, response)) return;
      // The upstream never ends this stream by itself: only a closed connection stops it.
      response.on('close', () => upstreamClosed());
      response.writeHead(200, { 'content-type': 'text/event-stream' }).write(sseFrames(streamOpening('Endless')));
    });
    const relay = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: endless.baseURL }) });
    try {
      const response = await postJson(relay, '/v1/messages', { ...hello, stream: true });
      const reader = response.body!.getReader();
      const first = await reader.read();
      assert.match(new TextDecoder().decode(first.value), /message_start/);
      await reader.cancel();
      await closed;
    } finally {
      await relay.close();
      await endless.close();
    }
  });

  test('a front mms in front of an mms: the upstream frees its slot when the client leaves', { timeout: 20_000 }, async () => {
    const slow = await startService({ models: scriptedModels({ tokenDelayMs: 20 }) });
    const relay = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: slow.baseURL, apiKey: slow.apiKey }) });
    try {
      const long = { ...hello, max_tokens: 2000, messages: [{ role: 'user', content: 'word '.repeat(1500) }], stream: true };
      const response = await postJson(relay, '/v1/messages', long);
      const reader = response.body!.getReader();
      await reader.read();
      const admission = slow.registry.resolve('mid').admission;
      assert.equal(admission.stats.active, 1);
      await reader.cancel();
      // 1500 tokens at 20 ms would hold the slot for 30 s; a closed connection frees it at once.
      while (admission.stats.active > 0) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(admission.stats.active, 0);
    } finally {
      await relay.close();
      await slow.close();
    }
  });
});

describe('start-up check', () => {
  test('prepare reports a reachable upstream and its model, and does not stop the start for one that is down', async () => {
    const up = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: upstream.baseURL, apiKey: upstream.apiKey }) });
    const down = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: await closedPortURL() }) });
    const unknown = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: upstream.baseURL, apiKey: upstream.apiKey, model: 'no-such-model' }) });
    try {
      const [reachable] = await up.registry.prepare({ progress: false });
      assert.equal(reachable?.prepared, `upstream ${upstream.baseURL}, model small-older`);
      const [unreachable] = await down.registry.prepare({ progress: false });
      assert.match(unreachable?.prepared ?? '', /not reachable now \(connection refused \(ECONNREFUSED\)\); every request tries it again/);
      const [missing] = await unknown.registry.prepare({ progress: false });
      assert.match(missing?.prepared ?? '', /does not list the model no-such-model/);
    } finally {
      await up.close();
      await down.close();
      await unknown.close();
    }
  });

  test('what cannot fix itself stops the start: a refused key, an unset key variable', async () => {
    const refused = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: upstream.baseURL, apiKey: 'not-the-upstream-key' }) });
    const unset = await startService({ models: modelsWithBackend({ type: 'messages-upstream', baseURL: upstream.baseURL, apiKeyEnv: 'MMS_TEST_UNSET_UPSTREAM_KEY' }) });
    try {
      await assert.rejects(refused.registry.prepare({ progress: false }), /refused this service's API key \(401\)/);
      await assert.rejects(unset.registry.prepare({ progress: false }), /MMS_TEST_UNSET_UPSTREAM_KEY \(backend.apiKeyEnv\) is not set/);
    } finally {
      await refused.close();
      await unset.close();
    }
  });
});
