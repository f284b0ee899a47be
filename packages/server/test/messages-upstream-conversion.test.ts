/**
 * The messages-upstream backend's pure parts: the request sent upstream (server tool blocks as
 * client tool round trips), the upstream events as our parts, and error mapping.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkToolPairing, ServiceError, type ContentBlock, type MessageParam } from '@model-messages/protocol';
import { isRetryableFailure } from '../src/backends/fallback/fallback-backend.js';
import { transportError, upstreamError } from '../src/backends/messages-upstream/upstream-errors.js';
import { UpstreamEventReader } from '../src/backends/messages-upstream/upstream-events.js';
import { upstreamMessageBody, upstreamMessages } from '../src/backends/messages-upstream/upstream-request.js';
import { Signer } from '../src/signing/signer.js';
import { signThinking } from '../src/signing/thinking-signature.js';
import type { StreamPart } from '../src/streaming/stream-part.js';
import { callOf } from './model-call-support.js';

/** The messages sent upstream for a conversation, and this turn's earlier steps. */
function sentUpstream(messages: MessageParam[], turnSoFar: ContentBlock[] = []): MessageParam[] {
  return upstreamMessages(callOf({ messages }, { turnSoFar }).turns) as MessageParam[];
}

/** A fetch result as the model reads it (tool-kinds/server-results.ts). */
const fetchedText = (id: string) => [{ type: 'text', text: `URL: https://example.com/${id}\n\n` }];

const signer = new Signer(Buffer.alloc(32, 6));

const use = (id: string) => ({
  type: 'server_tool_use' as const,
  id,
  name: 'web_fetch' as const,
  input: { url: `https://example.com/${id}` },
});
const result = (
  id: string,
  content: Record<string, unknown> = { type: 'web_fetch_result', url: `https://example.com/${id}` },
) => ({ type: 'web_fetch_tool_result' as const, tool_use_id: id, content });

describe('the conversation sent upstream', () => {
  test('server calls and results become a tool_use turn and a tool_result turn, text after them a new assistant turn', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hm', signature: signThinking(signer, 'hm', 's') },
          { type: 'text', text: 'Fetching.' },
          use('a'),
          result('a'),
          { type: 'text', text: 'Done.' },
        ],
      },
      { role: 'user', content: 'thanks' },
    ];
    assert.deepEqual(sentUpstream(messages), [
      { role: 'user', content: [{ type: 'text', text: 'read it' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hm', signature: 's' },
          { type: 'text', text: 'Fetching.' },
          { type: 'tool_use', id: 'a', name: 'web_fetch', input: { url: 'https://example.com/a' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'a',
            content: fetchedText('a'),
          },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
      { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    ]);
  });

  test("thinking goes back with the upstream's own signature; thinking another engine made, with none, is left out", () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'think' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'upstream', signature: signThinking(signer, 'upstream', 'EqUpstream==') },
          { type: 'thinking', thinking: 'local', signature: signThinking(signer, 'local', '') },
          { type: 'text', text: 'Answer.' },
        ],
      },
      { role: 'user', content: 'more' },
    ];
    assert.deepEqual(sentUpstream(messages)[1], {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'upstream', signature: 'EqUpstream==' },
        { type: 'text', text: 'Answer.' },
      ],
    });
  });

  test("a client call in the same step moves after the server results, so the client's tool_result answers it", () => {
    const messages: MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 'lookup', input: {} }, use('a'), result('a')] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c', content: 'ok' }] },
    ];
    assert.deepEqual(sentUpstream(messages), [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 'web_fetch', input: { url: 'https://example.com/a' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'a',
            content: fetchedText('a'),
          },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 'lookup', input: {} }] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'c', content: [{ type: 'text', text: 'ok' }] }],
      },
    ]);
  });

  test('results answered out of order still pair every tool_use with the turn right after it', () => {
    const turn = [use('a'), use('b'), result('a'), { type: 'text' as const, text: 'between' }, result('b')];
    const converted = sentUpstream([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: turn },
    ]);
    const ids = (message: MessageParam | undefined, type: string) =>
      (message?.content as Array<{ type: string; id?: string; tool_use_id?: string }>)
        .filter((block) => block.type === type)
        .map((block) => block.id ?? block.tool_use_id);
    // The upstream's own pairing rule (the one this service applies) accepts it.
    assert.doesNotThrow(() => checkToolPairing(converted));
    for (let index = 1; index < converted.length; index += 2) {
      assert.equal(converted[index]?.role, 'assistant');
      assert.deepEqual(ids(converted[index + 1], 'tool_result'), ids(converted[index], 'tool_use'));
    }
  });

  test("this turn's earlier steps follow a paused turn sent back, each call answered", () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [use('a'), result('a')] },
    ];
    const turnSoFar = [use('b'), result('b')] as unknown as ContentBlock[];
    const converted = sentUpstream(messages, turnSoFar);
    assert.deepEqual(
      converted.map((message) => message.role),
      ['user', 'assistant', 'user', 'assistant', 'user'],
    );
    assert.doesNotThrow(() => checkToolPairing(converted));
  });

  test('an error result is a tool_result with is_error', () => {
    const converted = sentUpstream([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: [use('a'), result('a', { type: 'web_fetch_tool_result_error', error_code: 'url_not_accessible' })],
      },
    ]);
    assert.deepEqual(converted[2]?.content, [
      {
        type: 'tool_result',
        tool_use_id: 'a',
        content: [{ type: 'text', text: 'Web fetch failed: url_not_accessible.' }],
        is_error: true,
      },
    ]);
  });

  test('consecutive user turns go as one turn, their blocks in order, as the public API joins them', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
    ];
    assert.deepEqual(sentUpstream(messages), [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
    ]);
  });

  test('the body: streamed, the budget left, server tools as custom tools, a thinking budget kept below it', () => {
    const call = callOf(
      {
        model: 'mid',
        max_tokens: 4000,
        messages: [{ role: 'user', content: 'go' }],
        tools: [{ type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'], max_uses: 2 }],
        thinking: { type: 'enabled', budget_tokens: 2000 },
      },
      { step: 1, outputBudget: 1500 },
    );
    const body = upstreamMessageBody(call, 'upstream-mid') as {
      model: string;
      stream: boolean;
      max_tokens: number;
      tools: Array<Record<string, unknown>>;
      thinking: unknown;
    };
    assert.equal(body.model, 'upstream-mid');
    assert.equal(body.stream, true);
    assert.equal(body.max_tokens, 1500);
    assert.equal(body.tools[0]?.name, 'web_search');
    assert.equal(body.tools[0]?.type, undefined);
    assert.deepEqual((body.tools[0]?.input_schema as { required: string[] }).required, ['query']);
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 1499 });
  });
});

describe('upstream events as parts', () => {
  function read(events: object[], serverTools: string[] = []): StreamPart[] {
    const reader = new UpstreamEventReader('http://up', new Set(serverTools));
    const parts: StreamPart[] = [];
    for (const event of events) reader.read(JSON.stringify(event), parts);
    return parts;
  }

  test("a tool_use of an offered server tool's name is a server_tool_use; others stay tool_use", () => {
    const parts = read(
      [
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 'toolu_1', name: 'web_search', input: {} },
        },
        {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: '{"query":"x"}', extra: 1 },
        },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'tool_use', id: 'toolu_2', name: 'lookup', input: {} },
        },
        { type: 'content_block_stop', index: 1 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } },
        { type: 'message_stop' },
      ],
      ['web_search'],
    );
    assert.deepEqual(parts, [
      { type: 'block-start', block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } },
      { type: 'block-delta', delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } },
      { type: 'block-stop' },
      {
        type: 'block-start',
        block: { type: 'tool_use', id: 'toolu_2', name: 'lookup', input: {}, caller: { type: 'direct' } },
      },
      { type: 'block-stop' },
      { type: 'output-tokens', count: 9 },
      { type: 'finish', stopReason: 'tool_use', stopSequence: null },
    ]);
  });

  test("message_delta's input_tokens (an upstream's count from its engine) is passed on for the final usage", () => {
    const parts = read([
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { input_tokens: 41, output_tokens: 3 },
      },
      { type: 'message_stop' },
    ]);
    assert.deepEqual(parts.slice(-3), [
      { type: 'input-tokens', count: 41 },
      { type: 'output-tokens', count: 3 },
      { type: 'finish', stopReason: 'end_turn', stopSequence: null },
    ]);
  });

  test("the upstream's cache use is passed on with the first block (message_start's) and with message_delta (its cumulative figures)", () => {
    const parts = read([
      {
        type: 'message_start',
        message: { usage: { input_tokens: 12, cache_read_input_tokens: 3_000, cache_creation_input_tokens: 40 } },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 3, cache_read_input_tokens: 3_010 },
      },
      { type: 'message_stop' },
    ]);
    assert.deepEqual(
      parts.filter((part) => part.type === 'input-tokens'),
      [
        { type: 'input-tokens', count: 12, cacheRead: 3_000, cacheCreation: 40 },
        { type: 'input-tokens', count: 12, cacheRead: 3_010, cacheCreation: 40 },
      ],
    );
    // Before the block, not after: a stream its client cuts at its first output is recorded with it.
    assert.equal(parts[0]?.type, 'input-tokens');
    // Held until then: a part for message_start would count as the step's first output, which
    // ends the first-output timer and a fallback list's chance to move on.
    const opening = read([{ type: 'message_start', message: { usage: { input_tokens: 12, output_tokens: 1 } } }]);
    assert.deepEqual(opening, []);
  });

  test('an error event throws the same error type and message', () => {
    assert.throws(
      () => read([{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]),
      (error: unknown) =>
        error instanceof ServiceError &&
        error.code === 'overloaded' &&
        error.message === 'Overloaded' &&
        error.retryAfterSeconds === 1,
    );
  });

  test('a block type this service cannot relay is an error, never a silent drop', () => {
    assert.throws(
      () => read([{ type: 'content_block_start', index: 0, content_block: { type: 'container_upload' } }]),
      /cannot relay/,
    );
  });

  test('unknown event types are ignored, as clients of the public API must', () => {
    assert.deepEqual(read([{ type: 'future_event', x: 1 }]), []);
  });
});

describe('upstream errors', () => {
  test('each wire error type maps to the same type here', () => {
    const cases: Array<[string, number, string]> = [
      ['invalid_request_error', 400, 'invalid_request_error'],
      ['request_too_large', 413, 'request_too_large'],
      ['rate_limit_error', 429, 'rate_limit_error'],
      ['api_error', 500, 'api_error'],
      ['timeout_error', 504, 'timeout_error'],
      ['overloaded_error', 529, 'overloaded_error'],
    ];
    for (const [type, status, ours] of cases) {
      const error = upstreamError('http://up', status, { error: { type, message: 'm' } }, undefined);
      assert.equal(error.type, ours, type);
      assert.equal(error.message, 'm');
    }
  });

  test("an upstream mms's 502 that names model_output_invalid in mms-error-code stays itself, which a fallback list neither retries nor charges", () => {
    const envelope = { error: { type: 'api_error', message: "the model's answer failed twice" } };
    const error = upstreamError('http://up', 502, envelope, undefined, 'model_output_invalid');
    assert.deepEqual([error.code, error.status, error.type], ['model_output_invalid', 502, 'api_error']);
    assert.equal(isRetryableFailure(error), false);
    // A proxy's 502 Bad Gateway, with or without an api_error envelope, or a 500, is the backend failing.
    for (const proxied of [
      upstreamError('http://up', 502, envelope, undefined),
      upstreamError('http://up', 502, undefined, undefined),
      upstreamError('http://up', 500, envelope, undefined, 'internal'),
    ]) {
      assert.equal(proxied.code, 'internal');
      assert.equal(isRetryableFailure(proxied), true);
    }
    // The header alone, on another status or an event, does not make it one.
    assert.equal(upstreamError('http://up', 500, envelope, undefined, 'model_output_invalid').code, 'internal');
  });

  test('errors about our own key or model name the backend and are a 500; a refused key relays none of its text', () => {
    for (const type of ['authentication_error', 'permission_error', 'not_found_error']) {
      const status = type === 'not_found_error' ? 404 : 401;
      const error = upstreamError('the backend of model m', status, { error: { type, message: 'nope' } }, undefined);
      assert.equal(error.status, 500);
      assert.match(error.message, /^the backend of model m/);
      assert.equal(error.message.includes('nope'), type === 'not_found_error', type);
    }
  });

  test('a body that is no envelope falls back on the status', () => {
    assert.equal(upstreamError('http://up', 503, undefined, '3').type, 'overloaded_error');
    assert.equal(upstreamError('http://up', 503, undefined, '3').retryAfterSeconds, 3);
    assert.equal(upstreamError('http://up', 502, undefined, undefined).type, 'api_error');
  });

  test("the connection's time limits are 504 timeout_error; other transport failures 500", () => {
    assert.equal(
      transportError('http://up', Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' })).type,
      'timeout_error',
    );
    assert.equal(transportError('http://up', Object.assign(new Error('x'), { code: 'ECONNRESET' })).type, 'api_error');
  });
});
