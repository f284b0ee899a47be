/**
 * The openai-compatible backend against the fake engines, continued: the reply shapes of each
 * engine that need their own test (tool calls as each engine streams them, llama.cpp's usage
 * chunk with no choices), the engine's own usage in the final reply, the request fields a
 * generic server can be switched to, and how the engine's response is read to its end.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngineFixture, postJson, readSse } from '@model-messages/testing';
import { BOOKING, send, useEngines, user, WEATHER } from './openai-compatible-support.js';

const bench = useEngines({
  variants: [
    {
      suffix: 'reasoning-api',
      engine: 'generic',
      backend: { maxTokensField: 'max_completion_tokens', streamOptions: false },
    },
  ],
});

type Body = Record<string, any>;
const last = (kind: keyof typeof bench.engines): Body => bench.engines[kind].lastChatBody();

describe('tool calls and usage as each engine streams them', () => {
  test('llama.cpp: a tool call parsed from the native format (id and name first, then argument pieces) becomes a tool_use block', async () => {
    bench.engines['llama.cpp'].reply({ fixture: 'tool-calls' });
    const { reply } = await send(bench, 'llama.cpp', { tools: [WEATHER], tool_choice: { type: 'any' } });
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.name, block.input]),
      [['tool_use', 'get_weather', { city: 'Paris' }]],
    );
    assert.match(reply.content[0]!.id ?? '', /^toolu_/);
    assert.equal(reply.stop_reason, 'tool_use');
    assert.deepEqual([reply.usage.input_tokens, reply.usage.output_tokens], [120, 18]);
  });

  test('llama.cpp, newer builds: usage in a separate last chunk with no choices is read the same', async () => {
    bench.engines['llama.cpp'].reply({ fixture: 'usage-chunk' });
    const { reply } = await send(bench, 'llama.cpp', {});
    assert.deepEqual([reply.content[0]?.text, reply.stop_reason], ['Bonjour tout le monde.', 'end_turn']);
    assert.deepEqual([reply.usage.input_tokens, reply.usage.output_tokens], [31, 5]);
  });

  test('sglang: a forced strict tool (named tool_choice, grammar-constrained) becomes its tool_use block, streamed as generated', async () => {
    bench.engines.sglang.reply({ fixture: 'named-tool' });
    const { status, reply } = await send(bench, 'sglang', {
      tools: [WEATHER, BOOKING],
      tool_choice: { type: 'tool', name: 'book_flight' },
    });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.name, block.input]),
      [['tool_use', 'book_flight', { from: 'CDG', to: 'OSL', passengers: 2, cabin: 'economy' }]],
    );
    assert.equal(reply.stop_reason, 'tool_use');
    assert.deepEqual([reply.usage.input_tokens, reply.usage.output_tokens], [150, 26]);
  });

  test('sglang: an auto tool call after some text (ids only on the first chunk) becomes text, then tool_use', async () => {
    bench.engines.sglang.reply({ fixture: 'tool-calls' });
    const { reply } = await send(bench, 'sglang', { tools: [WEATHER] });
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.text ?? block.name, block.input]),
      [
        ['text', 'Let me check the weather.', undefined],
        ['tool_use', 'get_weather', { city: 'Paris' }],
      ],
    );
    assert.equal(reply.stop_reason, 'tool_use');
    assert.deepEqual([reply.usage.input_tokens, reply.usage.output_tokens], [180, 24]);
  });

  test("generic: a call whose name arrives only in its second delta is the offered tool's tool_use block", async () => {
    const opening = {
      choices: [
        {
          index: 0,
          delta: {
            role: 'assistant',
            tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { arguments: '' } }],
          },
        },
      ],
    };
    const named = {
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        },
      ],
    };
    const end = {
      choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 10, completion_tokens: 5 },
    };
    bench.engines.generic.reply({ stream: [opening, named, end] });
    const { status, reply } = await send(bench, 'generic', { tools: [WEATHER] });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.name, block.input]),
      [['tool_use', 'get_weather', { city: 'Paris' }]],
    );
    assert.equal(reply.stop_reason, 'tool_use');
  });

  // Ollama's OpenAI layer sends every call whole, in a chunk of its own, each at index 0 with its own id.
  const ollamaCall = (id: string, city: string) => ({
    choices: [
      {
        index: 0,
        delta: {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id, index: 0, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city }) } },
          ],
        },
      },
    ],
  });
  const ollamaEnd = { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'tool_calls' }] };

  test('ollama: parallel calls in chunks of their own, all at index 0, are told apart by their ids', async () => {
    bench.engines.ollama.reply({ stream: [ollamaCall('call_a', 'Paris'), ollamaCall('call_b', 'Oslo'), ollamaEnd] });
    const { status, reply } = await send(bench, 'ollama', { tools: [WEATHER] });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.name, block.input]),
      [
        ['tool_use', 'get_weather', { city: 'Paris' }],
        ['tool_use', 'get_weather', { city: 'Oslo' }],
      ],
    );
    assert.notEqual(reply.content[0]!.id, reply.content[1]!.id);
    assert.equal(reply.stop_reason, 'tool_use');
  });

  test('ollama: with disable_parallel_tool_use, the first of those calls is the answer', async () => {
    bench.engines.ollama.reply({ stream: [ollamaCall('call_a', 'Paris'), ollamaCall('call_b', 'Oslo'), ollamaEnd] });
    const { status, reply } = await send(bench, 'ollama', {
      tools: [WEATHER],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.name, block.input]),
      [['tool_use', 'get_weather', { city: 'Paris' }]],
    );
    assert.equal(reply.stop_reason, 'tool_use');
  });

  /** Ollama's answer under its guided `{"name", "input"}` envelope (tool_choice any with several tools), in pieces. */
  const envelopePieces = (pieces: readonly string[], finish: 'stop' | 'length') => ({
    stream: [
      ...pieces.map((content) => ({ choices: [{ index: 0, delta: { role: 'assistant', content } }] })),
      {
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: finish }],
        usage: { prompt_tokens: 40, completion_tokens: pieces.length },
      },
    ],
  });
  const TIME = {
    ...WEATHER,
    name: 'get_time',
    input_schema: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
  };
  const ENVELOPE = ['{"name":"get_', 'time","input":', '{"zone":', '"Europe/', 'Oslo"}', '}'];

  test("ollama: the envelope's input streams in input_json_delta events once its name is known (issue 32)", async () => {
    bench.engines.ollama.reply(envelopePieces(ENVELOPE, 'stop'));
    const response = await postJson(bench.service, '/v1/messages', {
      model: 'ollama',
      max_tokens: 200,
      stream: true,
      messages: [user('What time is it in Oslo?')],
      tools: [WEATHER, TIME],
      tool_choice: { type: 'any' },
    });
    const events = (await readSse(response)).map((event) => event.data as Body);
    const start = events.find((event) => event.type === 'content_block_start');
    assert.deepEqual([start?.content_block.type, start?.content_block.name], ['tool_use', 'get_time']);
    const pieces = events
      .filter((event) => event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
      .map((event) => event.delta.partial_json as string);
    assert.deepEqual(pieces, ['{"zone":', '"Europe/', 'Oslo"}']);
    assert.equal(events.find((event) => event.type === 'message_delta')?.delta.stop_reason, 'tool_use');
  });

  test('ollama: an envelope cut by max_tokens is kept as a partial tool_use block, not refused as a call of no tool', async () => {
    bench.engines.ollama.reply(envelopePieces(ENVELOPE.slice(0, 4), 'length'));
    const { status, reply } = await send(bench, 'ollama', { tools: [WEATHER, TIME], tool_choice: { type: 'any' } });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.name, block.input]),
      [['tool_use', 'get_time', { zone: 'Europe/' }]],
    );
    assert.equal(reply.stop_reason, 'max_tokens');
  });

  test('ollama: an envelope cut before its name is known is no call: an empty reply ending in max_tokens', async () => {
    bench.engines.ollama.reply(envelopePieces(ENVELOPE.slice(0, 1), 'length'));
    const { status, reply } = await send(bench, 'ollama', { tools: [WEATHER, TIME], tool_choice: { type: 'any' } });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(reply.content, []);
    assert.equal(reply.stop_reason, 'max_tokens');
  });
});

describe("the engine's own usage", () => {
  const countOf = async (model: string, content: string) =>
    (
      (await (
        await postJson(bench.service, '/v1/messages/count_tokens', { model, messages: [user(content)] })
      ).json()) as { input_tokens: number }
    ).input_tokens;
  const streamedHello = async (model: string): Promise<Body[]> => {
    const response = await postJson(bench.service, '/v1/messages', {
      model,
      max_tokens: 200,
      stream: true,
      messages: [user('Hello')],
    });
    return (await readSse(response)).map((event) => event.data as Body);
  };
  const answerWithPromptTokens = (promptTokens: number) => ({
    stream: [
      {
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Noted.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: promptTokens, completion_tokens: 2, total_tokens: promptTokens + 2 },
      },
    ],
  });

  for (const [kind, promptTokens] of [
    ['sglang', 9],
    ['generic', 9],
  ] as const) {
    test(`${kind}: the engine's prompt_tokens replaces mms's up-front count in message_delta and the JSON reply; message_start keeps the count`, async () => {
      // A prompt far from the window starts with the estimate, whatever the engine's tokenizer.
      const counted = Math.ceil('Hello'.length / 4) + 4;
      assert.notEqual(counted, promptTokens);
      const { reply } = await send(bench, kind, {});
      assert.equal(reply.usage.input_tokens, promptTokens);
      const events = await streamedHello(kind);
      assert.equal(events[0]!.message.usage.input_tokens, counted);
      assert.equal(events.find((event) => event.type === 'message_delta')!.usage.input_tokens, promptTokens);
    });
  }

  test("ollama: its prompt_tokens (prompt_eval_count, only what missed its cache) is not the prompt's size: the count stays", async () => {
    const prompt = 'a follow-up turn whose prompt the engine has mostly cached. '.repeat(66);
    const counted = await countOf('ollama', prompt);
    assert.ok(counted > 900, String(counted));
    // A cache hit: Ollama evaluated only the last few tokens, or none.
    for (const evaluated of [3, 0]) {
      bench.engines.ollama.reply(answerWithPromptTokens(evaluated));
      const { reply } = await send(bench, 'ollama', { messages: [user(prompt)] });
      assert.equal(reply.usage.input_tokens, counted);
    }
  });

  for (const kind of ['vllm', 'sglang', 'llama.cpp'] as const) {
    test(`${kind}: the tokens its prefix cache held (cached_tokens) are cache_read_input_tokens, and input_tokens the rest`, async () => {
      bench.engines[kind].reply({
        stream: [
          {
            choices: [{ index: 0, delta: { role: 'assistant', content: 'Noted.' }, finish_reason: 'stop' }],
            usage: {
              prompt_tokens: 5_000,
              completion_tokens: 2,
              total_tokens: 5_002,
              prompt_tokens_details: { cached_tokens: 4_800 },
            },
          },
        ],
      });
      const events = await streamedHello(kind);
      const usage = events.find((event) => event.type === 'message_delta')!.usage;
      assert.deepEqual(
        [usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens, usage.output_tokens],
        [200, 4_800, 0, 2],
      );
      bench.engines[kind].reply({
        stream: [
          {
            choices: [{ index: 0, delta: { role: 'assistant', content: 'Noted.' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 900, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 512 } },
          },
        ],
      });
      const { reply } = await send(bench, kind, {});
      const json = reply.usage as { input_tokens: number; cache_read_input_tokens?: number };
      assert.deepEqual([json.input_tokens, json.cache_read_input_tokens], [388, 512]);
    });
  }

  for (const kind of ['vllm', 'sglang', 'llama.cpp', 'generic'] as const) {
    test(`${kind}: a prompt_tokens of 0 is no count: the up-front count stays`, async () => {
      const counted = await countOf(kind, 'Hello');
      bench.engines[kind].reply(answerWithPromptTokens(0));
      const { reply } = await send(bench, kind, {});
      assert.equal(reply.usage.input_tokens, counted);
      assert.ok(counted > 0);
    });
  }
});

describe('request fields of a generic server', () => {
  test('a generic server can take the budget as max_completion_tokens and no stream_options', async () => {
    await send(bench, 'generic', { max_tokens: 321 });
    assert.deepEqual(
      [last('generic').max_tokens, last('generic').max_completion_tokens, last('generic').stream_options],
      [321, undefined, { include_usage: true }],
    );
    const { status, reply } = await send(bench, 'generic-reasoning-api', { max_tokens: 321 });
    assert.equal(status, 200);
    assert.equal(reply.content[0]?.text, 'Hello there.');
    const body = last('generic');
    assert.equal(body.max_completion_tokens, 321);
    assert.ok(!('max_tokens' in body) && !('stream_options' in body), JSON.stringify(body));
    // A server that then sends no usage: the output chunks are the count.
    bench.engines.generic.reply({
      stream: [
        { choices: [{ index: 0, delta: { content: 'Hello' } }] },
        { choices: [{ index: 0, delta: { content: ' there.' }, finish_reason: 'stop' }] },
      ],
    });
    assert.equal((await send(bench, 'generic-reasoning-api', {})).reply.usage.output_tokens, 2);
  });
});

describe('reading the engine response', () => {
  const ollama = () => bench.engines.ollama;
  const { stream: answer } = loadEngineFixture('ollama', 'text');

  test("after [DONE] the engine's response is read to its end, not cut: no aborted body per request", async () => {
    const before = ollama().disconnects;
    const closed = ollama().closedResponses;
    ollama().reply({ stream: answer!, lingerMs: 200 });
    const { status, reply } = await send(bench, 'ollama', {});
    assert.equal(status, 200);
    assert.equal(reply.content[0]?.text, 'Repeat after me: the quick brown fox.');
    await ollama().waitForClosedResponses(closed + 1);
    // Hanging up at [DONE] would show here as a disconnect before the engine ended its response.
    assert.equal(ollama().disconnects, before);
  });

  test('an engine that lingers after [DONE] does not hold back message_stop: the stream ends first, the engine is still read to its end', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const before = ollama().disconnects;
    const closed = ollama().closedResponses;
    ollama().reply({ stream: answer!, holdAfterDone: held });
    const response = await postJson(bench.service, '/v1/messages', {
      model: 'ollama',
      max_tokens: 200,
      stream: true,
      messages: [user('Hello')],
    });
    const names = (await readSse(response)).map((event) => event.event).filter((name) => name !== 'ping');
    assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop']);
    assert.equal(ollama().closedResponses, closed, "message_stop arrived while the engine's response was still open");
    release();
    await ollama().waitForClosedResponses(closed + 1);
    assert.equal(ollama().disconnects, before, 'read to its end, not cut');
  });

  test('an engine that keeps sending after [DONE] is cut once the drain has read its limit; the answer is whole', async () => {
    const before = ollama().disconnects;
    const flooded = ollama().floodedCharacters;
    ollama().reply({ stream: answer!, floodAfterDone: true });
    const { status, reply } = await send(bench, 'ollama', {});
    assert.equal(status, 200);
    assert.equal(reply.content[0]?.text, 'Repeat after me: the quick brown fox.');
    await ollama().waitForDisconnects(before + 1);
    const sent = ollama().floodedCharacters - flooded;
    // Past the 64 KiB the drain reads, and hung up on long before the 16 MB the fake would send.
    assert.ok(sent > 64 * 1024 && sent < 16 * 1024 * 1024, String(sent));
  });

  test('an engine that never ends its response after [DONE] is hung up on by the drain, after the reply', async () => {
    const before = ollama().disconnects;
    ollama().reply({ stream: answer!, holdAfterDone: new Promise(() => {}) });
    const { status, reply } = await send(bench, 'ollama', {});
    assert.equal(status, 200);
    assert.equal(reply.stop_reason, 'end_turn');
    await ollama().waitForDisconnects(before + 1);
  });
});
