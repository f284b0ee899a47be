/**
 * The openai-compatible backend when things go wrong or need checking: engine errors mapped to
 * the service's envelope, connection failures and stalls ending in clear errors (never a hang),
 * the check-and-retry-once path where an engine cannot guide output, count_tokens through the
 * engines' tokenizers, the start-up check, and a client's disconnect cancelling the engine's work.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  parseSse,
  postJson,
  readSse,
  readStreamUntil,
  startService,
  type RunningService,
} from '@model-messages/testing';
import { BOOKING, CITY_FORMAT, ENGINE_KINDS, send, useEngines, user, WEATHER } from './openai-compatible-support.js';

// Short engine time limits only where a stall is the test: on a loaded machine the fake engine
// itself took over 300 ms to answer (an error fixture came back as a 504), and its first byte
// too (a stall midway met the first-byte limit before the idle one): each stall test gets a
// short limit only for the wait it is about.
const SHORT_LIMITS = 'vllm-short-limits';
const SHORT_IDLE = 'vllm-short-idle';
const bench = useEngines({
  variants: [
    { suffix: 'estimate', engine: 'vllm', backend: { countTokens: 'estimate' } },
    { suffix: 'short-limits', engine: 'vllm', backend: { idleTimeoutMs: 300, firstByteTimeoutMs: 300 } },
    { suffix: 'short-idle', engine: 'vllm', backend: { idleTimeoutMs: 300, firstByteTimeoutMs: 5_000 } },
  ],
});

type Body = Record<string, any>;

describe('engine errors', () => {
  const cases: Array<[string, string, number, string, RegExp]> = [
    ['vllm', 'error-500', 500, 'api_error', /the vllm engine failed \(500\): EngineCore encountered an issue/],
    ['generic', 'error-429', 429, 'rate_limit_error', /the generic engine is rate limiting: Rate limit reached/],
    ['sglang', 'error-503', 529, 'overloaded_error', /overloaded or not ready \(503\): The request queue is full/],
    ['llama.cpp', 'error-503-loading', 529, 'overloaded_error', /\(503\): Loading model/],
    [
      'vllm',
      'error-context-length',
      400,
      'invalid_request_error',
      /^prompt is too long for the model's engine: This model's maximum context length is 8192/,
    ],
    // A model that was never pulled is this service's configuration, not the caller's 404.
    [
      'ollama',
      'error-404-model',
      500,
      'api_error',
      /the ollama engine of model ollama answered 404: model 'qwen3:8b' not found; check the backend's baseURL and model/,
    ],
  ];
  for (const [kind, fixture, status, type, message] of cases) {
    test(`${kind} ${fixture} answers ${status} ${type}`, async () => {
      bench.engines[kind as 'vllm'].reply({ fixture });
      const { status: actual, reply, headers } = await send(bench, kind, {});
      assert.equal(actual, status);
      assert.equal(reply.error?.type, type);
      assert.match(reply.error?.message ?? '', message);
      if (status === 429) assert.equal(headers.get('retry-after'), '7');
      if (status === 529) assert.equal(headers.get('retry-after'), '1');
    });
  }

  for (const [kind, fixture, status, type, message] of cases) {
    test(`streamed, ${kind} ${fixture} is an ${type} event after message_start, with its code and retry-after`, async () => {
      // The stream opened at admission, before the engine answered (docs/decisions/0015).
      bench.engines[kind as 'vllm'].reply({ fixture });
      const response = await postJson(bench.service, '/v1/messages', {
        model: kind,
        max_tokens: 100,
        stream: true,
        messages: [user('Hi')],
      });
      assert.equal(response.status, 200);
      const events = await readSse(response);
      assert.deepEqual(
        events.map((event) => event.event),
        ['message_start', 'ping', 'error'],
      );
      const error = events.at(-1)!.data as Body;
      assert.equal(error.error.type, type);
      assert.match(error.error.message, message);
      assert.equal(
        error.mms_error_code,
        { 500: 'internal', 429: 'rate_limited', 529: 'overloaded', 400: 'prompt_too_long' }[status],
      );
      assert.equal(error.mms_retry_after, { 429: 7, 529: 1 }[status as 429]);
    });
  }

  test("an engine that refuses mms's key is a 500 naming the backend's apiKey, not the caller's 401", async () => {
    bench.engines.vllm.reply({ status: 401, body: { error: { message: 'Unauthorized' } } });
    const { status, reply } = await send(bench, 'vllm', {});
    assert.equal(status, 500);
    assert.match(reply.error?.message ?? '', /refused mms's credentials \(401\); check the backend's apiKey/);
  });

  test('an engine that stalls before answering is a 504 timeout_error', async () => {
    bench.engines.vllm.reply({ stall: 'before-headers' });
    const { status, reply } = await send(bench, SHORT_LIMITS, {});
    assert.equal(status, 504);
    assert.equal(reply.error?.type, 'timeout_error');
    assert.match(reply.error?.message ?? '', /first byte timeout \(300 ms\)/);
  });

  test('streamed, an engine that has not answered yet: message_start and a ping first, then its timeout as an event', async () => {
    // The engine's silence is a long prefill to a client: the stream opened at admission, so the
    // client hears from the service before the engine says anything (docs/decisions/0015).
    bench.engines.vllm.reply({ stall: 'before-headers' });
    const response = await fetch(`${bench.service.baseURL}/v1/messages`, {
      method: 'POST',
      headers: bench.service.headers,
      body: JSON.stringify({ model: SHORT_LIMITS, max_tokens: 100, stream: true, messages: [user('Hi')] }),
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const opening = await readStreamUntil(reader, /event: ping\n/);
    assert.match(opening, /^event: message_start\n/);
    const rest = await readStreamUntil(reader, /event: error\ndata: .*\n\n/);
    const error = parseSse(rest).at(-1)!.data as Body;
    assert.equal(error.error.type, 'timeout_error');
    assert.match(error.error.message, /first byte timeout \(300 ms\)/);
    assert.equal(error.mms_error_code, 'timeout');
  });

  test('a stream that stalls midway ends with an error event, not a hang', async () => {
    const chunk = { choices: [{ index: 0, delta: { content: 'Partial' } }] };
    bench.engines.vllm.reply({ stall: 'after-headers', stream: [chunk] });
    const response = await postJson(bench.service, '/v1/messages', {
      model: SHORT_IDLE,
      max_tokens: 100,
      stream: true,
      messages: [user('Hi')],
    });
    const events = (await readSse(response)).map((event) => event.data);
    assert.equal(response.status, 200);
    const error = events.at(-1) as Body;
    assert.equal(error.type, 'error');
    assert.equal(error.error.type, 'timeout_error');
    assert.match(error.error.message, /idle timeout \(300 ms\)/);
    assert.ok(!events.some((event) => event.type === 'message_stop'));
  });

  test("llama.cpp's error: line in a stream becomes an error event", async () => {
    bench.engines['llama.cpp'].reply({ fixture: 'stream-error' });
    const response = await postJson(bench.service, '/v1/messages', {
      model: 'llama.cpp',
      max_tokens: 100,
      stream: true,
      messages: [user('Hi')],
    });
    const events = (await readSse(response)).map((event) => event.data as Body);
    assert.ok(events.some((event) => event.type === 'content_block_delta' && event.delta.text === 'Partial'));
    assert.equal(events.at(-1)!.error.type, 'api_error');
    assert.match(events.at(-1)!.error.message, /failed to decode the batch/);
  });

  test('llama.cpp\'s newer data: {"error"} line in a stream becomes an error event, after the output so far', async () => {
    bench.engines['llama.cpp'].reply({ fixture: 'stream-error-data' });
    const response = await postJson(bench.service, '/v1/messages', {
      model: 'llama.cpp',
      max_tokens: 100,
      stream: true,
      messages: [user('Hi')],
    });
    const events = (await readSse(response)).map((event) => event.data as Body);
    assert.ok(events.some((event) => event.type === 'content_block_delta' && event.delta.text === 'Partial'));
    assert.equal(events.at(-1)!.error.type, 'api_error');
    assert.match(
      events.at(-1)!.error.message,
      /the llama\.cpp engine failed \(500\): Context size has been exceeded\./,
    );
    assert.ok(!events.some((event) => event.type === 'message_stop'));
  });

  test('an engine that hangs up without answering is a 500 saying so', async () => {
    bench.engines.ollama.reply({ destroy: true });
    const { status, reply } = await send(bench, 'ollama', {});
    assert.equal(status, 500);
    assert.match(reply.error?.message ?? '', /closed unexpectedly|socket hang up|other side closed/);
  });

  test('a stream cut off before its finish is an error, not a short answer', async () => {
    bench.engines.vllm.reply({ stream: [{ choices: [{ index: 0, delta: { content: 'Half' } }] }], done: false });
    const { status, reply } = await send(bench, 'vllm', {});
    assert.equal(status, 500);
    assert.match(reply.error?.message ?? '', /stream ended before the output finished/);
  });
});

describe('an engine that is not running', () => {
  let service: RunningService;
  before(async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const backend = {
      type: 'openai-compatible' as const,
      engine: 'vllm' as const,
      baseURL: `http://127.0.0.1:${port}/v1`,
      model: 'm',
    };
    service = await startService({
      models: [{ id: 'down', tier: 'mid', generation: 'newer', contextWindow: 4096, maxOutputTokens: 1024, backend }],
    });
  });
  after(() => service.close());

  test('a refused connection is a 500 api_error that says the engine is not reachable', async () => {
    const response = await postJson(service, '/v1/messages', { model: 'down', max_tokens: 10, messages: [user('Hi')] });
    const reply = (await response.json()) as Body;
    assert.equal(response.status, 500);
    assert.equal(reply.error.type, 'api_error');
    assert.match(reply.error.message, /the vllm engine is not reachable \(connection refused\)/);
  });

  test('the start-up check reports it and does not fail: the engine may start later', async () => {
    const prepared = await service.registry.resolve('down').backend.prepare({ progress: false });
    assert.match(prepared, /not reachable yet/);
  });
});

describe('checked and retried once in mms (no guided decoding)', () => {
  const forced = { tools: [BOOKING], tool_choice: { type: 'tool', name: 'book_flight' } };

  test('a forced strict tool whose input fails its schema is asked for once more, with the reason', async () => {
    bench.engines.generic.reply({ fixture: 'tool-invalid' }, { fixture: 'tool-valid' });
    const { status, reply } = await send(bench, 'generic', forced);
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.name, block.input]),
      [['tool_use', 'book_flight', { from: 'CDG', to: 'OSL', passengers: 2, cabin: 'business' }]],
    );
    const [first, retry] = bench.engines.generic.chatBodies().slice(-2) as Body[];
    assert.equal(first!.messages[0].role, 'user');
    assert.match(
      retry!.messages[0].content,
      /An earlier call of the tool "book_flight" had input that failed its JSON Schema \(\/ must have required property 'cabin'\)/,
    );
    assert.deepEqual(retry!.tool_choice, { type: 'function', function: { name: 'book_flight' } });
    assert.equal(reply.usage.output_tokens, 40);
  });

  test('a second failure is a clear 502 model_output_invalid (api_error), not an invalid answer', async () => {
    bench.engines.generic.reply({ fixture: 'tool-invalid' }, { fixture: 'tool-invalid' });
    const { status, reply } = await send(bench, 'generic', forced);
    assert.equal(status, 502);
    assert.equal(reply.error?.type, 'api_error');
    assert.match(
      reply.error?.message ?? '',
      /the model's input for the tool "book_flight" failed tools\.0\.input_schema twice: \/ must have required property 'cabin'/,
    );
  });

  test('an output_config.format answer that is not valid JSON for the schema is asked for once more', async () => {
    bench.engines.generic.reply({ fixture: 'format-invalid' }, { fixture: 'format-valid' });
    const { status, reply } = await send(bench, 'generic', {
      output_config: { format: { type: 'json_schema', schema: CITY_FORMAT } },
    });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(JSON.parse(reply.content[0]?.text ?? ''), { city: 'Paris', country: 'France' });
    const retry = bench.engines.generic.lastChatBody() as Body;
    assert.deepEqual(
      retry.messages.slice(-2).map((message: Body) => message.role),
      ['assistant', 'user'],
    );
    assert.equal(retry.messages.at(-2).content, 'Sure! The city is Paris.');
    assert.match(retry.messages.at(-1).content, /does not match the required JSON Schema: not JSON/);
  });

  test('the first answer of a checked format never reaches a streaming client', async () => {
    bench.engines.generic.reply({ fixture: 'format-invalid' }, { fixture: 'format-valid' });
    const response = await postJson(bench.service, '/v1/messages', {
      model: 'generic',
      max_tokens: 100,
      stream: true,
      output_config: { format: { type: 'json_schema', schema: CITY_FORMAT } },
      messages: [user('City?')],
    });
    const texts = (await readSse(response))
      .map((event) => event.data as Body)
      .filter((event) => event.type === 'content_block_delta')
      .map((event) => event.delta.text);
    assert.deepEqual(texts, ['{"city": "Paris", "country": "France"}']);
  });

  test('a format answer that fails twice is a clear 502', async () => {
    bench.engines.generic.reply({ fixture: 'format-invalid' }, { fixture: 'format-invalid' });
    const { status, reply } = await send(bench, 'generic', {
      output_config: { format: { type: 'json_schema', schema: CITY_FORMAT } },
    });
    assert.equal(status, 502);
    assert.match(reply.error?.message ?? '', /the model's answer failed output_config\.format\.schema twice: not JSON/);
  });

  test('guided output that still misses the schema is a clear 502, with no retry', async () => {
    const before = bench.engines.vllm.chatBodies().length;
    bench.engines.vllm.reply({ fixture: 'text' });
    const { status, reply } = await send(bench, 'vllm', {
      output_config: { format: { type: 'json_schema', schema: CITY_FORMAT } },
    });
    assert.equal(status, 502);
    assert.match(reply.error?.message ?? '', /the model's answer failed output_config\.format\.schema: not JSON/);
    assert.equal(bench.engines.vllm.chatBodies().length, before + 1);
  });

  test('a call of a tool the request did not offer is a 502 naming it', async () => {
    const answer = (content: string) => ({ choices: [{ index: 0, delta: { role: 'assistant', content } }] });
    bench.engines.ollama.reply({
      stream: [
        answer('{"name":"delete_everything","input":{}}'),
        { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'stop' }] },
      ],
    });
    const { status, reply } = await send(bench, 'ollama', { tools: [WEATHER, BOOKING], tool_choice: { type: 'any' } });
    assert.equal(status, 502);
    assert.equal(reply.error?.type, 'api_error');
    assert.match(reply.error?.message ?? '', /the model called a tool that was not offered: "delete_everything"/);
  });

  const unofferedCall = {
    choices: [
      {
        index: 0,
        delta: {
          role: 'assistant',
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'delete_everything', arguments: '{}' } },
          ],
        },
      },
    ],
  };
  const toolCallsEnd = {
    choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
    usage: { prompt_tokens: 10, completion_tokens: 5 },
  };

  for (const kind of ENGINE_KINDS) {
    test(`${kind}: a tool call the engine streams for a tool the request did not offer is a 502 naming it`, async () => {
      bench.engines[kind].reply({ stream: [unofferedCall, toolCallsEnd] });
      const { status, reply } = await send(bench, kind, { tools: [WEATHER], tool_choice: { type: 'auto' } });
      assert.equal(status, 502, JSON.stringify(reply));
      assert.equal(reply.error?.type, 'api_error');
      assert.match(reply.error?.message ?? '', /the model called a tool that was not offered: "delete_everything"/);
    });
  }

  test('streamed, the text before a call of a tool not offered arrives, then the error: no block of that call', async () => {
    const text = { choices: [{ index: 0, delta: { role: 'assistant', content: 'Cleaning up.' } }] };
    bench.engines.generic.reply({ stream: [text, unofferedCall, toolCallsEnd] });
    const response = await postJson(bench.service, '/v1/messages', {
      model: 'generic',
      max_tokens: 100,
      stream: true,
      tools: [WEATHER],
      messages: [user('Hi')],
    });
    const events = (await readSse(response)).map((event) => event.data as Body);
    assert.ok(events.some((event) => event.type === 'content_block_delta' && event.delta.text === 'Cleaning up.'));
    assert.ok(
      !events.some((event) => event.type === 'content_block_start' && event.content_block.type === 'tool_use'),
      JSON.stringify(events),
    );
    assert.equal(events.at(-1)!.error.type, 'api_error');
    assert.match(events.at(-1)!.error.message, /the model called a tool that was not offered: "delete_everything"/);
    assert.ok(!events.some((event) => event.type === 'message_stop'));
  });

  test('a strict tool input cut off by max_tokens is passed on as it is, not repaired', async () => {
    const cut = {
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index: 0,
                id: 'call_1',
                type: 'function',
                function: { name: 'book_flight', arguments: '{"from":"CDG","to":"OS' },
              },
            ],
          },
        },
      ],
    };
    const end = {
      choices: [{ index: 0, delta: {}, finish_reason: 'length' }],
      usage: { prompt_tokens: 30, completion_tokens: 12 },
    };
    const requestsBefore = bench.engines.generic.chatBodies().length;
    bench.engines.generic.reply({ stream: [cut, end] });
    const { reply } = await send(bench, 'generic', { tools: [BOOKING], max_tokens: 12 });
    assert.equal(reply.stop_reason, 'max_tokens');
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.input]),
      [['tool_use', { from: 'CDG', to: 'OS' }]],
    );
    assert.equal(bench.engines.generic.chatBodies().length, requestsBefore + 1);
  });

  test("a strict tool the model called on its own is checked; a bad input is generated again under the engine's guided decoding", async () => {
    const badCall = {
      choices: [
        {
          index: 0,
          delta: {
            role: 'assistant',
            content: '',
            tool_calls: [
              {
                id: 'call_1',
                index: 0,
                type: 'function',
                function: { name: 'book_flight', arguments: '{"from":"CDG"}' },
              },
            ],
          },
          finish_reason: null,
        },
      ],
    };
    const end = { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'tool_calls' }] };
    bench.engines.ollama.reply(
      { stream: [{ choices: [{ index: 0, delta: { content: 'Booking.' } }] }, badCall, end] },
      { fixture: 'forced-json' },
    );
    const { status, reply } = await send(bench, 'ollama', { tools: [WEATHER, BOOKING] });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['text', 'tool_use'],
    );
    assert.deepEqual(reply.content[1]!.input, { from: 'CDG', to: 'OSL', passengers: 2, cabin: 'economy' });
    const repair = bench.engines.ollama.lastChatBody() as Body;
    assert.deepEqual(repair.response_format.json_schema.schema, BOOKING.input_schema);
    assert.equal(reply.stop_reason, 'tool_use');
  });
});

describe('count_tokens', () => {
  const body = (model: string) => ({
    model,
    system: 'Be brief.',
    tools: [WEATHER],
    messages: [user('Weather in Paris?')],
  });
  const count = async (model: string) =>
    (
      (await (await postJson(bench.service, '/v1/messages/count_tokens', body(model))).json()) as {
        input_tokens: number;
      }
    ).input_tokens;
  const lastRequests = (kind: 'vllm' | 'sglang' | 'llama.cpp', n: number): Array<[string, Body]> =>
    bench.engines[kind].requests.slice(-n).map((request) => [request.path, request.body as Body]);

  test('vLLM counts with POST /tokenize on the chat messages and tools', async () => {
    bench.engines.vllm.tokenCount = 123;
    assert.equal(await count('vllm'), 123);
    const [path, sent] = lastRequests('vllm', 1)[0]!;
    assert.equal(path, '/tokenize');
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
    ]);
    assert.equal(sent.tools[0].function.name, 'get_weather');
    assert.equal(sent.add_generation_prompt, true);
  });

  test('llama.cpp renders with /apply-template and counts the prompt with /tokenize', async () => {
    bench.engines['llama.cpp'].tokenCount = 55;
    assert.equal(await count('llama.cpp'), 55);
    const [[templatePath, template], [tokenizePath, tokenize]] = lastRequests('llama.cpp', 2) as [
      [string, Body],
      [string, Body],
    ];
    assert.deepEqual([templatePath, tokenizePath], ['/apply-template', '/tokenize']);
    assert.equal(template.messages[1].content, 'Weather in Paris?');
    assert.match(tokenize.content, /^<\|im_start\|>system\nBe brief\.<\|im_end\|>/);
    assert.equal(tokenize.add_special, true);
  });

  test("SGLang's /tokenize counts the conversation's text, plus the template's tokens per message", async () => {
    bench.engines.sglang.tokenCount = 40;
    assert.equal(await count('sglang'), 40 + 2 * 4);
    const [, sent] = lastRequests('sglang', 1)[0]!;
    assert.match(sent.prompt, /Be brief\.\nWeather in Paris\?\n\[\{"type":"function"/);
  });

  test('Ollama and the estimate setting count 4 characters per token, asking the engine nothing', async () => {
    const before = bench.engines.ollama.requests.length;
    const ollama = await count('ollama');
    assert.equal(bench.engines.ollama.requests.length, before);
    const vllmBefore = bench.engines.vllm.requests.length;
    assert.equal(await count('vllm-estimate'), ollama);
    assert.equal(bench.engines.vllm.requests.length, vllmBefore);
    const text = [
      'Be brief.',
      'Weather in Paris?',
      JSON.stringify([
        {
          type: 'function',
          function: { name: WEATHER.name, description: WEATHER.description, parameters: WEATHER.input_schema },
        },
      ]),
    ].join('\n');
    assert.equal(ollama, Math.ceil(text.length / 4) + 2 * 4);
  });
});

describe('start-up check', () => {
  const prepare = (model: string) => bench.service.registry.resolve(model).backend.prepare({ progress: false });

  test('an engine that lists the model is ready, with its context length where it says', async () => {
    assert.match(await prepare('vllm'), /vllm engine, model "Qwen\/Qwen3-8B": ready \(engine context 8192 tokens\)/);
    assert.match(await prepare('ollama'), /ready$/);
  });

  test('an engine that is up but serves other models stops the start with the fix (vLLM), or warns (llama.cpp)', async () => {
    const wrong = (kind: 'vllm' | 'llama.cpp') =>
      startService({
        models: [
          {
            id: 'w',
            tier: 'mid',
            generation: 'newer',
            contextWindow: 4096,
            maxOutputTokens: 1024,
            backend: {
              type: 'openai-compatible',
              engine: kind,
              baseURL: bench.engines[kind].baseURL,
              model: 'not-served',
            },
          },
        ],
      });
    const vllm = await wrong('vllm');
    await assert.rejects(
      vllm.registry.resolve('w').backend.prepare({ progress: false }),
      /the engine serves Qwen\/Qwen3-8B, not "not-served"; set backend\.model to one of them/,
    );
    await vllm.close();
    const llama = await wrong('llama.cpp');
    assert.match(
      await llama.registry.resolve('w').backend.prepare({ progress: false }),
      /not in the engine's model list/,
    );
    await llama.close();
  });
});

describe('cancellation', () => {
  test('a client that disconnects cancels the request to the engine', { timeout: 10_000 }, async () => {
    const before = bench.engines.ollama.disconnects;
    const chunk = { choices: [{ index: 0, delta: { role: 'assistant', content: 'Once' } }] };
    bench.engines.ollama.reply({ stall: 'after-headers', stream: [chunk] });
    const controller = new AbortController();
    const response = await fetch(`${bench.service.baseURL}/v1/messages`, {
      method: 'POST',
      headers: bench.service.headers,
      signal: controller.signal,
      body: JSON.stringify({ model: 'ollama', max_tokens: 1000, stream: true, messages: [user('Tell a long story.')] }),
    });
    const reader = response.body!.getReader();
    // The stream opens at admission, before the engine is asked: its first content says it was.
    await readStreamUntil(reader, /Once/);
    controller.abort();
    // Without the abort reaching the engine this never resolves, and the test times out.
    await bench.engines.ollama.waitForDisconnects(before + 1);
    assert.equal(bench.engines.ollama.disconnects, before + 1);
  });
});
