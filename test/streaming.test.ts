/** SSE streaming: the public event sequence, and the JSON reply as the fold of the same stream. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  postJson,
  readSse,
  scriptedModels,
  startService,
  type RunningService,
  type SseEvent,
} from '@model-messages/testing';
import { countTokens } from '../packages/server/src/backends/scripted/tokenizer.js';

let service: RunningService;
let script: string;
before(async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-stream-'));
  script = join(folder, 'script.json');
  writeFileSync(
    script,
    JSON.stringify([
      {
        when: '^two tools$',
        steps: [
          [
            { type: 'text', text: 'Calling both.' },
            { type: 'tool_use', name: 'lookup', input: { q: 'a' } },
            { type: 'tool_use', name: 'lookup', input: { q: 'b' } },
          ],
        ],
      },
      {
        when: '^search and ask$',
        steps: [
          [
            { type: 'server_tool_use', name: 'web_search', input: { query: 'x' } },
            { type: 'tool_use', name: 'lookup', input: { q: 'a' } },
          ],
          [{ type: 'text', text: 'Thanks.' }],
        ],
      },
      {
        when: '^search please$',
        steps: [
          [{ type: 'server_tool_use', name: 'web_search', input: { query: 'x' } }],
          [{ type: 'text', text: 'Nothing found.' }],
        ],
      },
    ]),
  );
  service = await startService({ models: scriptedModels({ script, faults: true }) });
});
after(() => service.close());

const request = { model: 'mid', max_tokens: 100, messages: [{ role: 'user', content: 'Stream this back, please.' }] };

async function stream(
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ response: Response; events: SseEvent[] }> {
  const response = await postJson(service, '/v1/messages', { ...body, stream: true }, headers);
  return { response, events: await readSse(response) };
}

function eventNames(events: SseEvent[]): string[] {
  return events.map((event) => event.event).filter((name) => name !== 'ping');
}

describe('SSE stream', () => {
  test('is text/event-stream with the public event sequence', async () => {
    const { response, events } = await stream(request);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.match(response.headers.get('request-id') ?? '', /^req_/);
    const names = eventNames(events);
    assert.equal(names[0], 'message_start');
    assert.equal(names[1], 'content_block_start');
    assert.deepEqual(names.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    assert.ok(names.filter((name) => name === 'content_block_delta').length >= 5);
  });

  test('sends a ping after message_start', async () => {
    const { events } = await stream(request);
    assert.equal(events[1]?.event, 'ping');
  });

  test('message_start carries the real input token count, equal to count_tokens', async () => {
    const { events } = await stream(request);
    const counted = (await (
      await postJson(service, '/v1/messages/count_tokens', { model: request.model, messages: request.messages })
    ).json()) as { input_tokens: number };
    const start = events[0]?.data as unknown as { message: { usage: { input_tokens: number } } };
    assert.ok(counted.input_tokens > 0);
    assert.equal(start.message.usage.input_tokens, counted.input_tokens);
  });

  test('message_delta carries cumulative usage equal to the text deltas sent', async () => {
    const { events } = await stream(request);
    const deltas = events.filter((event) => event.event === 'content_block_delta');
    const final = events.find((event) => event.event === 'message_delta')?.data as unknown as {
      usage: { output_tokens: number; input_tokens: number };
      delta: { stop_reason: string };
    };
    assert.equal(final.usage.output_tokens, deltas.length);
    assert.ok(final.usage.input_tokens > 0);
    assert.equal(final.delta.stop_reason, 'end_turn');
  });

  test('the JSON reply equals the fold of the stream', async () => {
    const json = (await (
      await postJson(service, '/v1/messages', { ...request, thinking: { type: 'adaptive' } })
    ).json()) as Record<string, unknown>;
    const { events } = await stream({ ...request, thinking: { type: 'adaptive' } });
    const text = events
      .filter((event) => event.event === 'content_block_delta')
      .map((event) => (event.data.delta as { text?: string }).text ?? '')
      .join('');
    const content = json.content as Array<{ type: string; text?: string; thinking?: string }>;
    assert.deepEqual(
      content.map((block) => block.type),
      ['thinking', 'text'],
    );
    assert.equal(content[1]?.text, 'Stream this back, please.');
    assert.equal(text, 'Stream this back, please.');
    const delta = events.find((event) => event.event === 'message_delta')?.data as unknown as {
      usage: { output_tokens: number };
    };
    assert.equal((json.usage as { output_tokens: number }).output_tokens, delta.usage.output_tokens);
  });

  test('thinking streams thinking_delta then signature_delta', async () => {
    const { events } = await stream({ ...request, thinking: { type: 'adaptive' } });
    const deltaTypes = events
      .filter((event) => event.event === 'content_block_delta' && event.data.index === 0)
      .map((event) => (event.data.delta as { type: string }).type);
    assert.equal(deltaTypes[0], 'thinking_delta');
    assert.equal(deltaTypes.at(-1), 'signature_delta');
  });

  test('tool input streams as input_json_delta that joins to the input', async () => {
    const tools = [
      {
        name: 'lookup',
        description: 'd',
        input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      },
    ];
    const { events } = await stream({ ...request, tools, tool_choice: { type: 'tool', name: 'lookup' } });
    const start = events.find((event) => event.event === 'content_block_start')?.data as unknown as {
      content_block: { type: string; id: string; input: unknown };
    };
    assert.equal(start.content_block.type, 'tool_use');
    assert.match(start.content_block.id, /^toolu_/);
    assert.deepEqual(start.content_block.input, {});
    const json = events
      .filter((event) => event.event === 'content_block_delta')
      .map((event) => (event.data.delta as { partial_json: string }).partial_json)
      .join('');
    assert.equal(typeof (JSON.parse(json) as { q: unknown }).q, 'string');
  });

  test('an error after the stream began is an error event, never a fake message_stop', async () => {
    const { response, events } = await stream(request, { 'mms-fault': 'stream-error' });
    assert.equal(response.status, 200);
    const names = eventNames(events);
    assert.equal(names.at(-1), 'error');
    assert.ok(!names.includes('message_stop'));
    assert.ok(!names.includes('message_delta'));
    assert.deepEqual(events.at(-1)?.data.error, { type: 'api_error', message: 'Injected fault: stream-error' });
    // What the status reply's headers would have said: mms-error-code (no retry-after for a 500).
    assert.equal(events.at(-1)?.data.mms_error_code, 'internal');
    assert.equal(events.at(-1)?.data.mms_retry_after, undefined);
  });

  test('a backend failure before any output is an error event after message_start, with its code and retry-after', async () => {
    // The stream opened at admission (docs/decisions/0015): the status is sent, so the backend's
    // 529 comes as the event, carrying what the status reply's headers would have said.
    const { response, events } = await stream(request, { 'mms-fault': 'http-529' });
    assert.equal(response.status, 200);
    assert.deepEqual(
      events.map((event) => event.event),
      ['message_start', 'ping', 'error'],
    );
    const error = events.at(-1)?.data as Record<string, unknown>;
    assert.deepEqual(error.error, { type: 'overloaded_error', message: 'Injected fault: http-529' });
    assert.equal(error.mms_error_code, 'overloaded');
    assert.equal(error.mms_retry_after, 1);
    assert.equal(error.request_id, response.headers.get('request-id'));
  });

  test('the same failure of a JSON request is still its HTTP status', async () => {
    const response = await postJson(service, '/v1/messages', request, { 'mms-fault': 'http-529' });
    assert.equal(response.status, 529);
    assert.equal(response.headers.get('retry-after'), '1');
    assert.equal(((await response.json()) as { error: { type: string } }).error.type, 'overloaded_error');
  });

  test('what is refused before admission stays an HTTP status on a stream', async () => {
    const unknownModel = await postJson(service, '/v1/messages', { ...request, model: 'nobody', stream: true });
    assert.equal(unknownModel.status, 404);
    const invalid = await postJson(service, '/v1/messages', { ...request, max_tokens: 0, stream: true });
    assert.equal(invalid.status, 400);
    // The scripted models' window is 4,096 tokens: the count refuses this before admission.
    const long = Array.from({ length: 5000 }, (_, index) => `w${index}`).join(' ');
    const tooLong = await postJson(service, '/v1/messages', {
      ...request,
      messages: [{ role: 'user', content: long }],
      stream: true,
    });
    assert.equal(tooLong.status, 400);
    assert.match(((await tooLong.json()) as { error: { message: string } }).error.message, /prompt is too long/);
  });
});

describe('turn shape', () => {
  const tools = [
    { name: 'lookup', description: 'd', input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
  ];

  test('disable_parallel_tool_use keeps the reply to one tool_use block', async () => {
    const parallel = (await (
      await postJson(service, '/v1/messages', { ...request, messages: [{ role: 'user', content: 'two tools' }], tools })
    ).json()) as { content: Array<{ type: string }> };
    assert.deepEqual(
      parallel.content.map((block) => block.type),
      ['text', 'tool_use', 'tool_use'],
    );
    const single = (await (
      await postJson(service, '/v1/messages', {
        ...request,
        messages: [{ role: 'user', content: 'two tools' }],
        tools,
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      })
    ).json()) as { content: Array<{ type: string; input?: unknown }>; stop_reason: string };
    assert.deepEqual(
      single.content.map((block) => block.type),
      ['text', 'tool_use'],
    );
    assert.deepEqual(single.content[1]?.input, { q: 'a' });
    assert.equal(single.stop_reason, 'tool_use');
  });

  test('disable_parallel_tool_use still counts the tokens of the call it keeps when the engine streams token by token', async () => {
    // Token by token, the count comes after the call in a later batch than its block: the turn must read on for it.
    const slow = await startService({ models: scriptedModels({ script, tokenDelayMs: 1 }) });
    try {
      const body = {
        ...request,
        messages: [{ role: 'user', content: 'two tools' }],
        tools,
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      };
      const reply = (await (await postJson(slow, '/v1/messages', body)).json()) as {
        content: Array<{ type: string }>;
        usage: { output_tokens: number };
      };
      assert.deepEqual(
        reply.content.map((block) => block.type),
        ['text', 'tool_use'],
      );
      assert.equal(reply.usage.output_tokens, countTokens('Calling both.') + countTokens(JSON.stringify({ q: 'a' })));
      const events = await readSse(await postJson(slow, '/v1/messages', { ...body, stream: true }));
      const delta = events.find((event) => event.event === 'message_delta')?.data as unknown as {
        usage: { output_tokens: number };
      };
      assert.equal(delta.usage.output_tokens, reply.usage.output_tokens);
    } finally {
      await slow.close();
    }
  });

  test('a step that calls a server tool and a client tool runs the server tool before handing the turn back', async () => {
    const webSearch = { type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'] };
    const body = { ...request, messages: [{ role: 'user', content: 'search and ask' }], tools: [webSearch, ...tools] };
    const reply = (await (await postJson(service, '/v1/messages', body)).json()) as {
      content: Array<{ type: string; id?: string }>;
      stop_reason: string;
    };
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'tool_use', 'web_search_tool_result'],
    );
    assert.equal(reply.stop_reason, 'tool_use');
    // The client can send the turn back with its tool result: every server call has its result.
    const toolUseId = reply.content[1]?.id;
    const next = {
      ...body,
      messages: [
        ...body.messages,
        { role: 'assistant', content: reply.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: 'ok' }] },
      ],
    };
    const followUp = await postJson(service, '/v1/messages', next);
    assert.equal(followUp.status, 200, await followUp.clone().text());
  });

  test('a server_tool_use gets a result block (unavailable until server tools exist) and the turn goes on', async () => {
    const body = {
      ...request,
      messages: [{ role: 'user', content: 'search please' }],
      tools: [{ type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'] }],
    };
    const reply = (await (await postJson(service, '/v1/messages', body)).json()) as {
      content: Array<{ type: string; content?: unknown; text?: string }>;
      stop_reason: string;
      usage: { server_tool_use: unknown };
    };
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'web_search_tool_result', 'text'],
    );
    assert.deepEqual(reply.content[1]?.content, { type: 'web_search_tool_result_error', error_code: 'unavailable' });
    assert.equal(reply.content[2]?.text, 'Nothing found.');
    assert.equal(reply.stop_reason, 'end_turn');
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 0 });
  });
});
