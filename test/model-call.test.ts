/**
 * One model call for every backend (issue 15): the same request tells every engine the same
 * things. Each case goes through POST /v1/messages (or count_tokens) on the scripted backend, the
 * embedded llama.cpp engine (the tiny test GGUF), an OpenAI-compatible engine (a fake vLLM) and a
 * Messages upstream (a raw server that records what it is sent), and each failed before the
 * backends shared the call: server tools missing from llama.cpp's prompt, search results sent to
 * engines as base64, an image in a tool result turned into the text "[image]", and a number out of
 * the double range reaching the client as null.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  answerCount,
  FakeOpenAiEngine,
  postJson,
  rawUpstream,
  sseFrames,
  startService,
  streamOf,
  tinyLlamaModel,
  type RawUpstream,
  type RunningService,
} from '@model-messages/testing';
import { Signer } from '../packages/server/src/signing/signer.js';
import { encodeSearchContent } from '../packages/server/src/signing/search-content.js';

const BACKENDS = ['scripted', 'llama', 'vllm', 'upstream'] as const;
type BackendName = (typeof BACKENDS)[number];

/** The service's key, so that search results made here verify there. */
const SIGNING_KEY = Buffer.alloc(32, 8);
const signer = new Signer(SIGNING_KEY);

let service: RunningService;
let engine: FakeOpenAiEngine;
let upstream: RawUpstream;

before(async () => {
  engine = await FakeOpenAiEngine.start('vllm');
  upstream = await rawUpstream((request, response) => {
    if (answerCount(request, response)) return;
    response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames(streamOf('Upstream answer.')));
  });
  const model = (id: BackendName, backend: Record<string, unknown>) => ({
    id,
    tier: 'mid' as const,
    generation: 'older' as const,
    contextWindow: 4096,
    maxOutputTokens: 1024,
    backend: backend as never,
  });
  service = await startService(
    {
      models: [
        model('scripted', { type: 'scripted' }),
        // chatML: the wrapper `auto` resolves to for this template, named: resolving it costs most of a second.
        model('llama', { type: 'llama-cpp', model: await tinyLlamaModel(), threads: 1, chatWrapper: 'chatML' }),
        model('vllm', { type: 'openai-compatible', engine: 'vllm', baseURL: engine.baseURL, model: engine.model }),
        model('upstream', { type: 'messages-upstream', baseURL: upstream.baseURL }),
      ],
    },
    process.cwd(),
    { signingKey: SIGNING_KEY },
  );
});

after(async () => {
  await service.close();
  await engine.close();
  await upstream.close();
});

interface Reply {
  content: Array<{ type: string; text?: string; input?: Record<string, unknown> }>;
  stop_reason: string;
  error?: { type: string; message: string };
  input_tokens?: number;
}

async function post(
  path: string,
  model: BackendName,
  body: Record<string, unknown>,
): Promise<{ status: number; reply: Reply }> {
  const response = await postJson(service, path, {
    model,
    ...(path.endsWith('count_tokens') ? {} : { max_tokens: 8 }),
    ...body,
  });
  return { status: response.status, reply: (await response.json()) as Reply };
}

const LOOKUP = {
  name: 'lookup',
  description: 'Look a word up.',
  input_schema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
};
const SEARCH = { type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'] };

/** The body of the last request an upstream or engine was sent. */
function lastUpstreamBody(): { tools?: Array<{ name: string }>; messages: Array<{ role: string; content: unknown }> } {
  const requests = upstream.requests.filter((request) => request.path === '/v1/messages');
  return requests.at(-1)!.body as never;
}

function lastEngineBody(): {
  tools?: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content: unknown }>;
} {
  return engine.lastChatBody() as never;
}

describe('server tools are offered to the model on every backend', () => {
  const withSearch = { messages: [{ role: 'user', content: 'Find otters.' }], tools: [LOOKUP, SEARCH] };
  const withoutSearch = { messages: [{ role: 'user', content: 'Find otters.' }], tools: [LOOKUP] };

  for (const model of ['scripted', 'llama'] as const) {
    test(`${model}: web_search is part of the prompt, so it counts`, async () => {
      const counted = await post('/v1/messages/count_tokens', model, withSearch);
      const without = await post('/v1/messages/count_tokens', model, withoutSearch);
      assert.equal(counted.status, 200, JSON.stringify(counted.reply));
      assert.ok(
        counted.reply.input_tokens! > without.reply.input_tokens!,
        `${counted.reply.input_tokens} tokens with web_search, ${without.reply.input_tokens} without`,
      );
    });
  }

  test('vllm: web_search goes to the engine as a function beside the custom tool', async () => {
    engine.reply({ fixture: 'text' });
    const { status } = await post('/v1/messages', 'vllm', withSearch);
    assert.equal(status, 200);
    assert.deepEqual(
      lastEngineBody().tools?.map((tool) => tool.function.name),
      ['lookup', 'web_search'],
    );
  });

  test('upstream: web_search goes upstream as a custom tool beside the custom tool', async () => {
    const { status } = await post('/v1/messages', 'upstream', withSearch);
    assert.equal(status, 200);
    assert.deepEqual(
      lastUpstreamBody().tools?.map((tool) => tool.name),
      ['lookup', 'web_search'],
    );
  });
});

describe('a search result reads as text to every engine, never as its base64', () => {
  const text = 'Sea otters hold hands while they sleep.';
  const conversation = {
    tools: [SEARCH],
    messages: [
      { role: 'user', content: 'Otters?' },
      {
        role: 'assistant',
        content: [
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'otters' } },
          {
            type: 'web_search_tool_result',
            tool_use_id: 'srvtoolu_1',
            content: [
              {
                type: 'web_search_result',
                url: 'https://a.example/otters',
                title: 'Sea otters',
                encrypted_content: encodeSearchContent(signer, 'https://a.example/otters', text),
              },
            ],
          },
        ],
      },
      { role: 'user', content: 'Tell me more.' },
    ],
  };

  test('vllm: the tool message holds the result text', async () => {
    engine.reply({ fixture: 'text' });
    const { status } = await post('/v1/messages', 'vllm', conversation);
    assert.equal(status, 200);
    const sent = JSON.stringify(lastEngineBody().messages);
    assert.ok(sent.includes(text), sent);
    assert.ok(!sent.includes('mms2:'), sent);
  });

  test('upstream: the tool_result holds the result text', async () => {
    const { status } = await post('/v1/messages', 'upstream', conversation);
    assert.equal(status, 200);
    const sent = JSON.stringify(lastUpstreamBody().messages);
    assert.ok(sent.includes(text), sent);
    assert.ok(!sent.includes('mms2:'), sent);
  });

  test("scripted: the result's text is what counts, not its encoding", async () => {
    // The same result with its text twice counts the text's own tokens more; its base64 would
    // count as a token or two. (llama-cpp reads the same text: packages/server/test/web-search-tool.test.ts.)
    const longer = structuredClone(conversation);
    const result = (longer.messages[1]!.content as Array<{ content?: Array<{ encrypted_content: string }> }>)[1]!
      .content![0]!;
    result.encrypted_content = encodeSearchContent(signer, 'https://a.example/otters', `${text} ${text}`);
    const count = async (body: Record<string, unknown>) =>
      (await post('/v1/messages/count_tokens', 'scripted', body)).reply.input_tokens!;
    const added = (await count(longer)) - (await count(conversation));
    const textAlone =
      (await count({ messages: [{ role: 'user', content: `x ${text}` }] })) -
      (await count({ messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(added, textAlone);
  });
});

describe('an image inside a tool_result goes where images go on each backend: passed on, or refused naming it', () => {
  const withImage = {
    tools: [LOOKUP],
    messages: [
      { role: 'user', content: 'Look at it.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { word: 'x' } }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }],
          },
        ],
      },
    ],
  };

  test('llama: a 400 naming the block, in the words of an image in a user turn', async () => {
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const { status, reply } = await post(path, 'llama', withImage);
      assert.equal(status, 400, path);
      assert.equal(
        reply.error?.message,
        'messages.2.content.0.content.0: images are not supported by the llama-cpp backend',
      );
    }
  });

  test('vllm: the image follows the tool message in a user message', async () => {
    const { status } = await post('/v1/messages', 'vllm', withImage);
    assert.equal(status, 200);
    assert.deepEqual(lastEngineBody().messages.slice(-2), [
      { role: 'tool', tool_call_id: 'toolu_1', content: '[image: in the next user message]' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'The image returned by lookup (call toolu_1):' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
    ]);
  });

  test('upstream: the image goes upstream inside its tool_result', async () => {
    const { status } = await post('/v1/messages', 'upstream', withImage);
    assert.equal(status, 200);
    const last = lastUpstreamBody().messages.at(-1)!;
    assert.deepEqual(last.content, [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }],
      },
    ]);
  });

  test('scripted: the image is part of the prompt it reads', async () => {
    const { status } = await post('/v1/messages', 'scripted', withImage);
    assert.equal(status, 200);
  });
});

describe('a number out of the double range in a tool input never reaches the client as null', () => {
  const MEASURE = {
    name: 'measure',
    description: 'Record a measurement.',
    strict: true,
    input_schema: {
      type: 'object',
      properties: { value: { type: 'number' } },
      required: ['value'],
      additionalProperties: false,
    },
  };
  const callWith = (argumentsText: string) => ({
    stream: [
      {
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: 'c1', type: 'function', function: { name: 'measure', arguments: argumentsText } },
              ],
            },
          },
        ],
      },
      {
        choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
        usage: { prompt_tokens: 20, completion_tokens: 5 },
      },
    ],
  });

  test('vllm, a forced call the engine guided and streamed: a 502 naming the tool, not {"value": null}', async () => {
    engine.reply(callWith('{"value":1e999}'));
    const { status, reply } = await post('/v1/messages', 'vllm', {
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Measure.' }],
      tools: [MEASURE],
      tool_choice: { type: 'tool', name: 'measure' },
    });
    assert.equal(status, 502, JSON.stringify(reply));
    assert.equal(
      reply.error?.message,
      `the model's input for the tool "measure" failed tools.0.input_schema: a number is outside the double range`,
    );
  });

  test('vllm, a strict call the engine did not guide (tool_choice auto): held, generated once more, the valid second input is the answer', async () => {
    engine.reply(callWith('{"value":1e999}'), callWith('{"value":2.5}'));
    const { status, reply } = await post('/v1/messages', 'vllm', {
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Measure.' }],
      tools: [MEASURE],
    });
    assert.equal(status, 200, JSON.stringify(reply));
    assert.deepEqual(reply.content.at(-1)?.input, { value: 2.5 });
  });
});
