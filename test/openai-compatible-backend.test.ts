/**
 * The openai-compatible backend against a fake engine of each kind that replays the engines'
 * recorded replies (packages/testing/fixtures/openai-engines): what mms sends for every request
 * shape, and what it makes of every reply shape, streamed and folded, through the real service
 * and through the official client.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { postJson, readSse, signedThinking } from '@model-messages/testing';
import { BOOKING, CITY_FORMAT, send, useEngines, user, WEATHER, type Reply } from './openai-compatible-support.js';

const bench = useEngines({
  backend: { vllm: { apiKey: 'engine-secret' } },
  variants: [{ suffix: 'text-only', engine: 'vllm', backend: { images: false } }],
});

type Body = Record<string, any>;
const last = (kind: keyof typeof bench.engines): Body => bench.engines[kind].lastChatBody();

/** A fetch result as a model reads it: its URL, its title where it has one, and its text; or its error. */
function fetchedText(content: unknown): string {
  const error = content as { type: string; error_code?: string };
  if (error.type === 'web_fetch_tool_result_error') return `Web fetch failed: ${error.error_code}.`;
  const page = content as { url: string; content: { title?: string; source: { data: string } } };
  const title = page.content.title ? `\nTitle: ${page.content.title}` : '';
  return `URL: ${page.url}${title}\n\n${page.content.source.data}`;
}

describe('request mapping', () => {
  test('system, turns, tool history, thinking history and sampling settings become the chat request', async () => {
    const messages = [
      user('Weather in Paris?'),
      {
        role: 'assistant',
        content: [
          signedThinking(bench.service.signer, 'Look it up.'),
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '21 C' }] },
          { type: 'text', text: 'And now?' },
        ],
      },
    ];
    const { status } = await send(bench, 'vllm', {
      system: [{ type: 'text', text: 'Be terse.' }],
      messages,
      tools: [WEATHER],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 20,
      max_tokens: 321,
    });
    assert.equal(status, 200);
    const body = last('vllm');
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
        reasoning_content: 'Look it up.',
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '21 C' },
      { role: 'user', content: 'And now?' },
    ]);
    assert.equal(body.model, bench.engines.vllm.model);
    assert.deepEqual(
      [body.stream, body.stream_options, body.max_tokens, body.temperature, body.top_p, body.top_k],
      [true, { include_usage: true }, 321, 0.2, 0.9, 20],
    );
    assert.deepEqual(body.tools, [
      {
        type: 'function',
        function: { name: 'get_weather', description: WEATHER.description, parameters: WEATHER.input_schema },
      },
    ]);
    assert.equal(body.parallel_tool_calls, true);
    assert.equal(bench.engines.vllm.requests.at(-1)!.headers.authorization, 'Bearer engine-secret');
  });

  test('an image becomes an image_url part with a data URL; a tool result error is marked', async () => {
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Oslo' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'no such city', is_error: true }],
      },
    ];
    await send(bench, 'ollama', { messages, tools: [WEATHER] });
    const body = last('ollama');
    assert.deepEqual(body.messages[0].content, [
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
    assert.deepEqual(body.messages[2], { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: no such city' });
    // Ollama carries reasoning back as `reasoning`, and takes no tool_choice.
    assert.equal(body.tool_choice, undefined);
  });

  describe('images a tool returned (a screenshot read by Claude Code)', () => {
    const SCREENSHOT = {
      name: 'read_screenshot',
      description: 'Reads a screenshot.',
      input_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    };
    const PNG = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
    const LINKED = { type: 'image', source: { type: 'url', url: 'https://images.example/shot-2.png' } };
    const conversation = (results: unknown[][]) => [
      user('Compare the two screenshots.'),
      {
        role: 'assistant',
        content: results.map((_, index) => ({
          type: 'tool_use',
          id: `toolu_${index + 1}`,
          name: 'read_screenshot',
          input: { name: `shot-${index + 1}` },
        })),
      },
      {
        role: 'user',
        content: [
          ...results.map((content, index) => ({ type: 'tool_result', tool_use_id: `toolu_${index + 1}`, content })),
          { type: 'text', text: 'Which is newer?' },
        ],
      },
    ];

    test('the tool messages keep the text; the images follow them in a user message, each after the call that returned it', async () => {
      const messages = conversation([[{ type: 'text', text: 'shot-1.png, 1280x800' }, PNG], [LINKED]]);
      assert.equal((await send(bench, 'vllm', { messages, tools: [SCREENSHOT] })).status, 200);
      assert.deepEqual(last('vllm').messages.slice(2), [
        { role: 'tool', tool_call_id: 'toolu_1', content: 'shot-1.png, 1280x800\n[image: in the next user message]' },
        { role: 'tool', tool_call_id: 'toolu_2', content: '[image: in the next user message]' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'The image returned by read_screenshot (call toolu_1):' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'text', text: 'The image returned by read_screenshot (call toolu_2):' },
            // A URL goes as it is, as a user turn's image does.
            { type: 'image_url', image_url: { url: 'https://images.example/shot-2.png' } },
            { type: 'text', text: 'Which is newer?' },
          ],
        },
      ]);
    });

    test('they count as images where the engine has no tokenizer: 1,600 tokens each, not their base64', async () => {
      const count = async (results: unknown[][]) => {
        const response = await postJson(bench.service, '/v1/messages/count_tokens', {
          model: 'ollama',
          messages: conversation(results),
          tools: [SCREENSHOT],
        });
        return ((await response.json()) as { input_tokens: number }).input_tokens;
      };
      const withImage = await count([[PNG]]);
      const withText = await count([[{ type: 'text', text: 'shot-1.png' }]]);
      assert.ok(withImage - withText >= 1_600 && withImage - withText < 1_650, `${withImage} - ${withText}`);
    });

    test('a model configured without images (images: false) refuses them, naming the block, before the engine is asked', async () => {
      const asked = bench.engines.vllm.requests.length;
      const cases: Array<[unknown[], string]> = [
        [conversation([[{ type: 'text', text: 'shot-1.png' }, PNG]]), 'messages.2.content.0.content.1'],
        [[user([{ type: 'text', text: 'What is this?' }, PNG])], 'messages.0.content.1'],
      ];
      for (const [messages, where] of cases) {
        for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
          const response = await postJson(bench.service, path, {
            model: 'vllm-text-only',
            ...(path === '/v1/messages' ? { max_tokens: 100 } : {}),
            messages,
            tools: [SCREENSHOT],
          });
          assert.equal(response.status, 400, path);
          const reply = (await response.json()) as Reply;
          assert.equal(reply.error?.message, `${where}: images are not supported by the openai-compatible backend`);
        }
      }
      assert.equal(bench.engines.vllm.requests.length, asked);
    });
  });

  test('tool_choice maps to auto, required, a named function and none; disable_parallel_tool_use to parallel_tool_calls false', async () => {
    const tools = [WEATHER, { ...WEATHER, name: 'get_time', description: 'Time in a zone.' }];
    const cases: Array<[Body, unknown, unknown]> = [
      [{ type: 'auto' }, 'auto', true],
      [{ type: 'any' }, 'required', true],
      [{ type: 'tool', name: 'get_time' }, { type: 'function', function: { name: 'get_time' } }, true],
      [{ type: 'auto', disable_parallel_tool_use: true }, 'auto', false],
      [{ type: 'none' }, 'none', undefined],
    ];
    for (const [choice, expected, parallel] of cases) {
      bench.engines.vllm.reply({ fixture: 'text' });
      await send(bench, 'vllm', { tools, tool_choice: choice });
      assert.deepEqual(last('vllm').tool_choice, expected, JSON.stringify(choice));
      assert.equal(last('vllm').parallel_tool_calls, parallel, JSON.stringify(choice));
    }
    // Ollama ignores tool_choice: none is kept by not offering the tools at all.
    await send(bench, 'ollama', { tools, tool_choice: { type: 'none' } });
    assert.equal(last('ollama').tools, undefined);
  });

  test("a forced strict tool uses each engine's own way of holding the call to the schema", async () => {
    const request = { tools: [WEATHER, BOOKING], tool_choice: { type: 'tool', name: 'book_flight' } };
    bench.engines.vllm.reply({ fixture: 'named-tool' });
    await send(bench, 'vllm', request);
    assert.deepEqual(last('vllm').tool_choice, { type: 'function', function: { name: 'book_flight' } });
    assert.equal(last('vllm').tools[1].function.strict, true);
    bench.engines.sglang.reply({ fixture: 'named-tool' });
    await send(bench, 'sglang', request);
    assert.deepEqual(last('sglang').tool_choice, { type: 'function', function: { name: 'book_flight' } });
    assert.equal(last('sglang').tools[1].function.strict, undefined);
    bench.engines['llama.cpp'].reply({
      stream: [
        { choices: [{ index: 0, delta: { content: '{"from":"CDG","to":"OSL","passengers":1,"cabin":"economy"}' } }] },
        { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      ],
    });
    await send(bench, 'llama.cpp', request);
    assert.deepEqual(last('llama.cpp').json_schema, BOOKING.input_schema);
    assert.equal(last('llama.cpp').tools, undefined);
    assert.match(last('llama.cpp').messages[0].content, /Call the tool "book_flight" now/);
    bench.engines.ollama.reply({ fixture: 'forced-json' });
    await send(bench, 'ollama', request);
    assert.deepEqual(last('ollama').response_format, {
      type: 'json_schema',
      json_schema: { name: 'output', schema: BOOKING.input_schema, strict: true },
    });
    assert.equal(last('ollama').tools, undefined);
    bench.engines.generic.reply({ fixture: 'tool-valid' });
    await send(bench, 'generic', request);
    assert.deepEqual(last('generic').tool_choice, { type: 'function', function: { name: 'book_flight' } });
    assert.equal(last('generic').response_format, undefined);
    assert.equal(last('generic').tools[1].function.strict, undefined);
  });

  test("output_config.format goes to each engine's guided-decoding field; the generic engine gets an instruction", async () => {
    const request = { output_config: { format: { type: 'json_schema', schema: CITY_FORMAT } } };
    const responseFormat = { type: 'json_schema', json_schema: { name: 'output', schema: CITY_FORMAT, strict: true } };
    for (const kind of ['vllm', 'sglang', 'ollama'] as const) {
      bench.engines[kind].reply({ fixture: 'vllm/format' });
      await send(bench, kind, request);
      assert.deepEqual(last(kind).response_format, responseFormat, kind);
    }
    bench.engines['llama.cpp'].reply({ fixture: 'vllm/format' });
    await send(bench, 'llama.cpp', request);
    assert.deepEqual(last('llama.cpp').json_schema, CITY_FORMAT);
    bench.engines.generic.reply({ fixture: 'format-valid' });
    await send(bench, 'generic', request);
    assert.equal(last('generic').response_format, undefined);
    assert.match(
      last('generic').messages[0].content,
      /Answer with one JSON value only, matching this JSON Schema: \{"type":"object"/,
    );
  });

  test("thinking switches the engine's thinking on and off", async () => {
    await send(bench, 'vllm', { thinking: { type: 'adaptive' } });
    assert.deepEqual(last('vllm').chat_template_kwargs, { enable_thinking: true });
    await send(bench, 'vllm', {});
    assert.deepEqual(last('vllm').chat_template_kwargs, { enable_thinking: false });
    await send(bench, 'ollama', {});
    assert.equal(last('ollama').reasoning_effort, 'none');
    await send(bench, 'ollama', { thinking: { type: 'adaptive' } });
    assert.equal(last('ollama').reasoning_effort, undefined);
  });

  test('stop sequences go to engines that report the match, and are matched in mms for the others', async () => {
    bench.engines.vllm.reply({ fixture: 'stop-sequence' });
    await send(bench, 'vllm', { stop_sequences: ['brown'] });
    assert.deepEqual(last('vllm').stop, ['brown']);
    bench.engines['llama.cpp'].reply({ fixture: 'text' });
    await send(bench, 'llama.cpp', { stop_sequences: ['brown'] });
    assert.equal(last('llama.cpp').stop, undefined);
  });

  test('an assistant prefill is continued: vLLM and SGLang are told so, the others continue a final assistant message themselves', async () => {
    const messages = [user('Name a colour.'), { role: 'assistant', content: 'The colour is' }];
    await send(bench, 'vllm', { messages });
    assert.deepEqual(last('vllm').messages.at(-1), { role: 'assistant', content: 'The colour is' });
    assert.deepEqual([last('vllm').continue_final_message, last('vllm').add_generation_prompt], [true, false]);
    await send(bench, 'ollama', { messages });
    assert.deepEqual(
      [last('ollama').messages.at(-1).content, last('ollama').continue_final_message],
      ['The colour is', undefined],
    );
  });

  test('top_k on an engine without it is refused, not dropped', async () => {
    const { status, reply } = await send(bench, 'ollama', { top_k: 5 });
    assert.equal(status, 400);
    assert.match(reply.error?.message ?? '', /top_k: the ollama engine's chat completions API has no top_k/);
  });

  test('a server tool runs in mms between two engine steps, and the second step sees its call and result', async () => {
    const call = {
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index: 0,
                id: 'c1',
                type: 'function',
                function: { name: 'web_fetch', arguments: '{"url":"https://example.com/page"}' },
              },
            ],
          },
        },
      ],
    };
    const done = {
      choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 50, completion_tokens: 9 },
    };
    bench.engines.vllm.reply({ stream: [call, done] }, { fixture: 'text' });
    const tools = [{ type: 'web_fetch_20260209', name: 'web_fetch', max_uses: 2 }];
    const { status, reply } = await send(bench, 'vllm', { tools, messages: [user('Summarize a page.')] });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'web_fetch_tool_result', 'text'],
    );
    const [first, second] = bench.engines.vllm.chatBodies().slice(-2) as Body[];
    assert.equal(first!.tools[0].function.name, 'web_fetch');
    assert.deepEqual(first!.tools[0].function.parameters.required, ['url']);
    const serverCall = reply.content[0]!;
    assert.deepEqual(second!.messages.slice(-2), [
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: serverCall.id,
            type: 'function',
            function: { name: 'web_fetch', arguments: '{"url":"https://example.com/page"}' },
          },
        ],
      },
      // The result as the model reads it (tool-kinds/server-results.ts), not the wire block.
      { role: 'tool', tool_call_id: serverCall.id, content: fetchedText(reply.content[1]!.content) },
    ]);
    assert.equal(reply.usage.output_tokens, 9 + 6);
    // The request's own prompt is the first step's (50), not the second step's, which holds the call and its result.
    assert.equal(reply.usage.input_tokens, 50);
  });

  test('a step after a server call that spent the whole max_tokens is not sent to the engine: the turn ends on max_tokens', async () => {
    const call = {
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index: 0,
                id: 'c1',
                type: 'function',
                function: { name: 'web_fetch', arguments: '{"url":"https://example.com/page"}' },
              },
            ],
          },
        },
      ],
    };
    const done = {
      choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 50, completion_tokens: 20 },
    };
    bench.engines.vllm.reply({ stream: [call, done] });
    const before = bench.engines.vllm.chatBodies().length;
    // The URL is not in the conversation: the fetch is answered with an error block, no network needed.
    const tools = [{ type: 'web_fetch_20260209', name: 'web_fetch', max_uses: 2 }];
    const { status, reply } = await send(bench, 'vllm', {
      max_tokens: 20,
      tools,
      messages: [user('Summarize a page.')],
    });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'web_fetch_tool_result'],
    );
    assert.equal(reply.stop_reason, 'max_tokens');
    assert.equal(reply.usage.output_tokens, 20);
    // Engines refuse a max_tokens of 0 (vLLM: "max_tokens must be at least 1"): none is sent.
    assert.deepEqual(
      bench.engines.vllm
        .chatBodies()
        .slice(before)
        .map((body) => body.max_tokens),
      [20],
    );
  });
});

describe('responses', () => {
  test('text with usage from the engine: output tokens, and its prompt_tokens as the final input tokens', async () => {
    const { reply } = await send(bench, 'vllm', {});
    assert.deepEqual(reply.content, [{ type: 'text', text: 'Paris is the capital of France.', citations: null }]);
    assert.equal(reply.stop_reason, 'end_turn');
    assert.deepEqual([reply.usage.input_tokens, reply.usage.output_tokens], [18, 6]);
  });

  for (const kind of ['vllm', 'sglang', 'llama.cpp', 'ollama'] as const) {
    test(`${kind}: reasoning becomes a signed thinking block when the request thinks, and is not shown otherwise`, async () => {
      bench.engines[kind].reply({ fixture: 'reasoning' }, { fixture: 'reasoning' });
      const thinking = await send(bench, kind, { thinking: { type: 'adaptive' } });
      assert.deepEqual(
        thinking.reply.content.map((block) => block.type),
        ['thinking', 'text'],
      );
      assert.ok((thinking.reply.content[0]!.thinking ?? '').length > 5);
      assert.match(thinking.reply.content[0]!.signature ?? '', /^mms1\.[A-Za-z0-9_-]{22}$/);
      const plain = await send(bench, kind, {});
      assert.deepEqual(
        plain.reply.content.map((block) => block.type),
        ['text'],
      );
      assert.equal(plain.reply.usage.output_tokens, thinking.reply.usage.output_tokens);
    });
  }

  for (const kind of ['vllm', 'ollama'] as const) {
    test(`${kind}: parallel tool calls become tool_use blocks in order`, async () => {
      bench.engines[kind].reply({ fixture: 'tool-calls' });
      const { reply } = await send(bench, kind, { tools: [WEATHER] });
      assert.deepEqual(
        reply.content.map((block) => [block.type, block.name, block.input]),
        [
          ['tool_use', 'get_weather', { city: 'Paris' }],
          ['tool_use', 'get_weather', { city: 'Oslo' }],
        ],
      );
      assert.match(reply.content[0]!.id ?? '', /^toolu_/);
      assert.notEqual(reply.content[0]!.id, reply.content[1]!.id);
      assert.equal(reply.stop_reason, 'tool_use');
    });
  }

  test('a forced tool answered through guided decoding becomes the tool_use block (llama.cpp, Ollama)', async () => {
    bench.engines['llama.cpp'].reply({ fixture: 'forced-json' });
    const llama = await send(bench, 'llama.cpp', {
      tools: [WEATHER],
      tool_choice: { type: 'tool', name: 'get_weather' },
    });
    assert.deepEqual(
      llama.reply.content.map((block) => [block.type, block.name, block.input]),
      [['tool_use', 'get_weather', { city: 'Paris' }]],
    );
    assert.equal(llama.reply.stop_reason, 'tool_use');
    bench.engines.ollama.reply({ fixture: 'envelope' });
    const time = {
      ...WEATHER,
      name: 'get_time',
      input_schema: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
    };
    const ollama = await send(bench, 'ollama', { tools: [WEATHER, time], tool_choice: { type: 'any' } });
    assert.deepEqual(
      ollama.reply.content.map((block) => [block.type, block.name, block.input]),
      [['tool_use', 'get_time', { zone: 'UTC' }]],
    );
    assert.deepEqual(
      last('ollama').response_format.json_schema.schema.anyOf.map((option: Body) => option.properties.name.const),
      ['get_weather', 'get_time'],
    );
  });

  test('finish reasons: length is max_tokens, content_filter is refusal', async () => {
    bench.engines.vllm.reply({ fixture: 'length' });
    assert.equal((await send(bench, 'vllm', {})).reply.stop_reason, 'max_tokens');
    bench.engines.generic.reply({ fixture: 'content-filter' });
    assert.equal((await send(bench, 'generic', {})).reply.stop_reason, 'refusal');
  });

  for (const kind of ['vllm', 'sglang'] as const) {
    test(`${kind}: the stop string the engine reports is the stop_sequence`, async () => {
      bench.engines[kind].reply({ fixture: 'stop-sequence' });
      const { reply } = await send(bench, kind, { stop_sequences: ['fox', 'brown'] });
      assert.deepEqual(
        [reply.content[0]?.text, reply.stop_reason, reply.stop_sequence],
        ['The quick ', 'stop_sequence', 'brown'],
      );
    });
  }

  test('sglang: a matched_stop that is a token id is an ordinary end', async () => {
    bench.engines.sglang.reply({ fixture: 'reasoning' });
    const { reply } = await send(bench, 'sglang', { stop_sequences: ['never'] });
    assert.equal(reply.stop_reason, 'end_turn');
  });

  for (const kind of ['llama.cpp', 'ollama'] as const) {
    test(`${kind}: stop sequences are matched in mms across chunk boundaries`, async () => {
      bench.engines[kind].reply({ fixture: 'text' });
      const { reply } = await send(bench, kind, { stop_sequences: ['fox', 'brown'] });
      assert.deepEqual(
        [reply.content[0]?.text, reply.stop_reason, reply.stop_sequence],
        ['Repeat after me: the quick ', 'stop_sequence', 'brown'],
      );
    });
  }

  test('a server that answers with one JSON body instead of a stream is read the same way', async () => {
    bench.engines.generic.reply({
      json: (await import('@model-messages/testing')).loadEngineFixture('generic', 'text').json,
    });
    const { reply } = await send(bench, 'generic', {});
    assert.deepEqual(
      [reply.content[0]?.text, reply.stop_reason, reply.usage.output_tokens],
      ['Hello there.', 'end_turn', 3],
    );
  });
});

describe('streaming', () => {
  test("the service streams the public event sequence, a call's input a member at a time", async () => {
    bench.engines.vllm.reply({ fixture: 'tool-calls' });
    const response = await postJson(bench.service, '/v1/messages', {
      model: 'vllm',
      max_tokens: 100,
      stream: true,
      tools: [WEATHER],
      messages: [user('Weather?')],
    });
    const events = (await readSse(response)).map((event) => event.data).filter((event) => event.type !== 'ping');
    assert.deepEqual(
      events.map((event) => event.type),
      [
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ],
    );
    // The engine's pieces `{"city": "` and `Paris"}` go out as the member once it is whole (issue 35).
    assert.deepEqual(
      events
        .filter((event) => event.type === 'content_block_delta')
        .map((event) => (event.delta as { partial_json: string }).partial_json),
      ['{"city": "Paris"}', '{"city": "Oslo"}'],
    );
    assert.deepEqual((events.at(-2) as Body).delta.stop_reason, 'tool_use');
  });
});

describe('official client', () => {
  const client = () => new Anthropic({ baseURL: bench.service.baseURL, apiKey: bench.service.apiKey, maxRetries: 0 });

  test('messages.create and messages.stream work against an engine-backed model', async () => {
    bench.engines.sglang.reply({ fixture: 'reasoning' });
    const message = await client().messages.create({
      model: 'sglang',
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'What is 2 + 2?' }],
    });
    assert.deepEqual(
      message.content.map((block) => block.type),
      ['thinking', 'text'],
    );
    bench.engines.vllm.reply({ fixture: 'tool-calls' });
    const stream = client().messages.stream({
      model: 'vllm',
      max_tokens: 100,
      tools: [WEATHER as Anthropic.Tool],
      messages: [{ role: 'user', content: 'Weather?' }],
    });
    const final = await stream.finalMessage();
    assert.deepEqual(
      final.content.map((block) => (block.type === 'tool_use' ? block.input : block.type)),
      [{ city: 'Paris' }, { city: 'Oslo' }],
    );
    // The SDK takes message_delta's input_tokens: the engine's own count (vllm/tool-calls).
    assert.equal(final.usage.input_tokens, 140);
  });

  test('a forced strict tool call through the client has input valid against its schema', async () => {
    bench.engines.vllm.reply({ fixture: 'named-tool' });
    const message = await client().messages.create({
      model: 'vllm',
      max_tokens: 512,
      tools: [BOOKING as Anthropic.Tool],
      tool_choice: { type: 'tool', name: 'book_flight', disable_parallel_tool_use: true },
      messages: [{ role: 'user', content: 'Book CDG to OSL for two.' }],
    });
    assert.equal(message.stop_reason, 'tool_use');
    const block = message.content[0];
    assert.equal(block?.type, 'tool_use');
    assert.deepEqual(block?.type === 'tool_use' ? block.input : undefined, {
      from: 'CDG',
      to: 'OSL',
      passengers: 2,
      cabin: 'economy',
    });
  });
});
