/**
 * The openai-compatible backend's pure parts: stop sequences matched in mms, the chunk
 * converter's held output, assistant turns with server tool results, the error table, and what
 * a tokenizer endpoint's refusal means.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContentBlock } from '@model-messages/protocol';
import { toChatMessages } from '../src/backends/openai-compatible/chat-messages.js';
import { ChunkConverter } from '../src/backends/openai-compatible/chunk-conversion.js';
import { ENGINE_PROFILES } from '../src/backends/openai-compatible/engine-profiles.js';
import { engineMessage, statusError, transportError } from '../src/backends/openai-compatible/error-mapping.js';
import { planChat } from '../src/backends/openai-compatible/output-plan.js';
import { StopSequenceMatcher } from '../src/backends/openai-compatible/stop-sequence-matcher.js';
import { tokenizerVerdict } from '../src/backends/openai-compatible/token-counting.js';
import { callOf, promptOf } from './model-call-support.js';

describe('stop sequences matched in mms', () => {
  test('text that may start a stop sequence is held until the next chunk decides', () => {
    const matcher = new StopSequenceMatcher(['</answer>', 'STOP']);
    assert.equal(matcher.push('The result </ans'), 'The result ');
    assert.equal(matcher.push('wer> trailing'), '');
    assert.equal(matcher.matched, '</answer>');
  });

  test('held text that never became a stop sequence is released', () => {
    const matcher = new StopSequenceMatcher(['STOP']);
    assert.equal(matcher.push('almost ST'), 'almost ');
    assert.equal(matcher.push('ill going'), 'STill going');
    assert.equal(matcher.push(' ST'), ' ');
    assert.equal(matcher.flush(), 'ST');
    assert.equal(matcher.matched, undefined);
  });

  test('the earliest stop sequence in the text wins', () => {
    const matcher = new StopSequenceMatcher(['brown', 'me']);
    assert.equal(matcher.push('Repeat after me: the quick brown fox'), 'Repeat after ');
    assert.equal(matcher.matched, 'me');
  });
});

describe('chunk converter', () => {
  const body = {
    max_tokens: 100,
    messages: [{ role: 'user', content: 'Go' }],
    tools: [
      {
        name: 'note',
        description: 'Take a note.',
        input_schema: { type: 'object', properties: { text: { type: 'string' } } },
      },
      {
        name: 'strict_one',
        description: 'Strict.',
        strict: true,
        input_schema: {
          type: 'object',
          properties: { n: { type: 'integer' } },
          required: ['n'],
          additionalProperties: false,
        },
      },
    ],
  };
  const request = promptOf(body);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  test('from an unguided strict call on, output is held in order; earlier blocks stream', () => {
    const converter = new ChunkConverter({
      engine: 'ollama',
      plan: planChat(request, ENGINE_PROFILES.ollama),
      thinks: false,
      stopSequences: [],
    });
    const streamed = [
      ...converter.push(chunk({ content: 'Noting.' })),
      ...converter.push(
        chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'strict_one', arguments: '{"n":' } }] }),
      ),
      ...converter.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] })),
      ...converter.push(
        chunk(
          { tool_calls: [{ index: 1, id: 'b', function: { name: 'note', arguments: '{"text":"x"}' } }] },
          'tool_calls',
        ),
      ),
    ];
    assert.deepEqual(
      streamed.map((part) => part.type),
      ['block-start', 'block-delta', 'block-stop'],
    );
    const summary = converter.end();
    assert.deepEqual(
      summary.tail.map((part) => part.type),
      [],
    );
    assert.deepEqual(
      summary.held.map((item) =>
        item.type === 'block-start'
          ? `start:${(item.block as ContentBlock & { name?: string }).name ?? item.block.type}`
          : item.type,
      ),
      ['pending-call', 'start:note', 'block-delta', 'tool-call-outcome', 'block-stop'],
    );
    const pending = summary.held[0];
    assert.ok(pending?.type === 'pending-call');
    assert.deepEqual([pending.name, pending.arguments], ['strict_one', '{"n":1}']);
    assert.deepEqual(
      summary.calls.map((call) => call.name),
      ['strict_one', 'note'],
    );
  });

  test('a guided forced call streams; the same call unguided is held', () => {
    const forced = promptOf({ ...body, tool_choice: { type: 'tool', name: 'strict_one' } });
    const guided = new ChunkConverter({
      engine: 'vllm',
      plan: planChat(forced, ENGINE_PROFILES.vllm),
      thinks: false,
      stopSequences: [],
    });
    assert.equal(
      guided.push(
        chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'strict_one', arguments: '{"n":2}' } }] }),
      ).length,
      2,
    );
    const unguided = new ChunkConverter({
      engine: 'generic',
      plan: planChat(forced, ENGINE_PROFILES.generic),
      thinks: false,
      stopSequences: [],
    });
    assert.equal(
      unguided.push(
        chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'strict_one', arguments: '{"n":2}' } }] }),
      ).length,
      0,
    );
  });

  const callDeltas = (parts: ReturnType<ChunkConverter['push']>) =>
    parts.map((part) =>
      part.type === 'block-start'
        ? `start:${(part.block as ContentBlock & { name?: string }).name}`
        : part.type === 'block-delta' && part.delta.type === 'input_json_delta'
          ? part.delta.partial_json
          : part.type,
    );

  test('a call at an index already open, with an id of its own, is a new call (Ollama: every call at index 0)', () => {
    const converter = new ChunkConverter({
      engine: 'ollama',
      plan: planChat(request, ENGINE_PROFILES.ollama),
      thinks: false,
      stopSequences: [],
    });
    const streamed = [
      ...converter.push(
        chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'note', arguments: '{"text":"a"}' } }] }),
      ),
      ...converter.push(
        chunk(
          { tool_calls: [{ index: 0, id: 'call_b', function: { name: 'note', arguments: '{"text":"b"}' } }] },
          'tool_calls',
        ),
      ),
      ...converter.end().tail,
    ];
    assert.deepEqual(callDeltas(streamed), [
      'start:note',
      '{"text":"a"}',
      'tool-call-outcome',
      'block-stop',
      'start:note',
      '{"text":"b"}',
      'tool-call-outcome',
      'block-stop',
    ]);
  });

  test("one call's deltas stay one call whether they repeat its id, carry it only first, or carry a null id", () => {
    for (const [first, later] of [
      ['call_a', 'call_a'],
      ['call_a', undefined],
      ['call_a', null],
      [undefined, 'call_a'],
    ] as const) {
      const converter = new ChunkConverter({
        engine: 'generic',
        plan: planChat(request, ENGINE_PROFILES.generic),
        thinks: false,
        stopSequences: [],
      });
      const streamed = [
        ...converter.push(
          chunk({
            tool_calls: [{ index: 0, id: first, type: 'function', function: { name: 'note', arguments: '{"text":' } }],
          }),
        ),
        ...converter.push(chunk({ tool_calls: [{ index: 0, id: later, function: { arguments: '"a"}' } }] })),
        // Some servers leave the index out of later deltas.
        ...converter.push(chunk({ tool_calls: [{ id: later, function: { arguments: '' } }] }, 'tool_calls')),
      ];
      const summary = converter.end();
      // The input goes out a member at a time (issue 35): the member once whole, with the closing bracket.
      assert.deepEqual(
        callDeltas([...streamed, ...summary.tail]),
        ['start:note', '{"text":"a"}', 'tool-call-outcome', 'block-stop'],
        `${first} then ${later}`,
      );
      assert.deepEqual(
        [summary.held, summary.calls],
        [[], [{ name: 'note', arguments: '{"text":"a"}', streaming: 'members' }]],
        `${first} then ${later}`,
      );
    }
  });

  test('an error object inside the stream is thrown as the mapped error', () => {
    const converter = new ChunkConverter({
      engine: 'vllm',
      plan: planChat(request, ENGINE_PROFILES.vllm),
      thinks: false,
      stopSequences: [],
    });
    assert.throws(
      () => converter.push({ error: { message: 'boom', code: 503 } }),
      (error: Error & { code?: string }) => error.code === 'overloaded' && /boom/.test(error.message),
    );
  });
});

describe('chat messages', () => {
  test('server tool results split the assistant turn so that each follows its call, as readable text', () => {
    const turn: ContentBlock[] = [
      { type: 'text', text: 'Searching.', citations: null },
      { type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'a' } },
      {
        type: 'web_search_tool_result',
        tool_use_id: 's1',
        content: [{ type: 'web_search_result', url: 'https://a.example' }],
      },
      { type: 'text', text: 'Found it.', citations: null },
    ];
    const call = callOf({ messages: [{ role: 'user', content: 'Find a.' }] }, { turnSoFar: turn });
    const messages = toChatMessages(call, { instruction: undefined, reasoningField: undefined, images: true });
    assert.deepEqual(messages, [
      { role: 'user', content: 'Find a.' },
      {
        role: 'assistant',
        content: 'Searching.',
        tool_calls: [{ id: 's1', type: 'function', function: { name: 'web_search', arguments: '{"query":"a"}' } }],
      },
      {
        role: 'tool',
        tool_call_id: 's1',
        content:
          'Web search results:\n\n[1] https://a.example\nURL: https://a.example\n(content not readable by this service)',
      },
      { role: 'assistant', content: 'Found it.' },
    ]);
  });

  test('a PDF document is refused with its path, not dropped', () => {
    const prompt = promptOf({
      messages: [
        {
          role: 'user',
          content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } }],
        },
      ],
    });
    assert.throws(
      () => toChatMessages(prompt, { instruction: undefined, reasoningField: undefined, images: true }),
      /messages\.0\.content\.0: PDF documents are not supported/,
    );
  });
});

describe('error mapping', () => {
  test('statuses map to the service table', () => {
    const codes = [400, 401, 404, 408, 413, 422, 429, 500, 502, 503, 504, 529].map((status) => [
      status,
      statusError('vllm', status, '{"error":{"message":"x"}}', '3').code,
    ]);
    assert.deepEqual(codes, [
      [400, 'invalid_request'],
      [401, 'internal'],
      [404, 'internal'],
      [408, 'timeout'],
      [413, 'request_too_large'],
      [422, 'invalid_request'],
      [429, 'rate_limited'],
      [500, 'internal'],
      [502, 'internal'],
      [503, 'overloaded'],
      [504, 'timeout'],
      [529, 'overloaded'],
    ]);
    assert.equal(statusError('vllm', 429, '', '3').retryAfterSeconds, 3);
  });

  test("a tokenizer endpoint's answer: missing for everyone, refusing one prompt, or the engine failing", () => {
    const verdicts = [401, 403, 404, 405, 408, 413, 429, 500, 501, 502, 503, 504].map((status) => [
      status,
      tokenizerVerdict(status, 'x'),
    ]);
    assert.deepEqual(verdicts, [
      [401, 'missing'],
      [403, 'missing'],
      [404, 'missing'],
      [405, 'missing'],
      [408, 'failure'],
      [413, 'this-request'],
      [429, 'failure'],
      [500, 'failure'],
      [501, 'missing'],
      [502, 'failure'],
      [503, 'failure'],
      [504, 'failure'],
    ]);
    // An older API that lacks the fields (vLLM's validation error, FastAPI's 422): the shape is refused.
    assert.equal(
      tokenizerVerdict(
        400,
        '{"object":"error","message":"[{\'type\': \'extra_forbidden\', \'msg\': \'Extra inputs are not permitted\'}]","code":400}',
      ),
      'missing',
    );
    assert.equal(
      tokenizerVerdict(422, '{"detail":[{"type":"missing","loc":["body","prompt"],"msg":"Field required"}]}'),
      'missing',
    );
    // This prompt only: the chat completion will say what is wrong with it.
    assert.equal(
      tokenizerVerdict(400, '{"error":{"message":"chat template failed to render the messages"}}'),
      'this-request',
    );
  });

  test("the engine's message is read from each engine's error shape", () => {
    assert.equal(engineMessage('{"error":{"message":"nested"}}'), 'nested');
    assert.equal(engineMessage('{"object":"error","message":"top level","code":400}'), 'top level');
    assert.equal(engineMessage('{"error":"ollama style"}'), 'ollama style');
    assert.equal(
      engineMessage('{"detail":[{"loc":["body","model"],"msg":"field required"}]}'),
      '[{"loc":["body","model"],"msg":"field required"}]',
    );
    assert.equal(engineMessage('Bad Gateway'), 'Bad Gateway');
  });

  test('failures with no answer name what happened', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    assert.match(
      transportError('sglang', refused).message,
      /the sglang engine is not reachable \(connection refused\)/,
    );
    const connectTimeout = Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' });
    assert.equal(transportError('vllm', connectTimeout).code, 'timeout');
    const dns = new Error('fetch failed', {
      cause: Object.assign(new Error('getaddrinfo ENOTFOUND engine'), { code: 'ENOTFOUND' }),
    });
    assert.match(transportError('vllm', dns).message, /host name does not resolve/);
  });
});
