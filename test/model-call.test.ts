/**
 * One model call for every backend (issue 15): the same request tells every engine the same
 * things. Each case goes through POST /v1/messages (or count_tokens) on every registered kind
 * (backends/backend-kinds.ts; issue 33: the cases loop over the list, and a kind without its way
 * of being tried here does not type check): the scripted backend, the embedded llama.cpp engine
 * (the tiny test GGUF), an OpenAI-compatible engine (a fake vLLM) and a Messages upstream (a raw
 * server that records what it is sent). Each case failed before the backends shared the call:
 * server tools missing from llama.cpp's prompt, search results sent to engines as base64, an image
 * in a tool result turned into the text "[image]", and a number out of the double range reaching
 * the client as null. What each kind declares it refuses, it refuses with a 400 naming the field.
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
import { backendConfig } from '../packages/server/src/backends/backend-config.js';
import { BACKEND_KINDS, backendKindOf, type BackendType } from '../packages/server/src/backends/backend-kinds.js';
import type { CallField } from '../packages/server/src/backends/call/call-fields.js';
import { Signer } from '../packages/server/src/signing/signer.js';
import { encodeSearchContent } from '../packages/server/src/signing/search-content.js';

type BackendName = 'scripted' | 'llama' | 'vllm' | 'upstream' | 'ollama';

/** What an engine in front of another server was last sent, as these cases read it. */
interface Sent {
  tools: string[];
  /** Its messages, as JSON. */
  messages: string;
}

/** How one registered kind is tried here. */
interface KindUnderTest {
  model: BackendName;
  /** Its backend's config, once the stand-ins it talks to are up. */
  config: () => Promise<Record<string, unknown>>;
  /** What its engine was last sent; left out for an engine in process, whose prompt count_tokens measures. */
  sent?: () => Sent;
  /** Whether it takes images; one that does not refuses them naming the block. */
  images: boolean;
  /** Queues the answer to its next request, for a stand-in that answers from a queue. */
  answerNext?: () => void;
}

const KINDS: Record<BackendType, KindUnderTest> = {
  scripted: { model: 'scripted', config: async () => ({ type: 'scripted' }), images: true },
  'llama-cpp': {
    model: 'llama',
    // chatML: the wrapper `auto` resolves to for this template, named: resolving it costs most of a second.
    config: async () => ({ type: 'llama-cpp', model: await tinyLlamaModel(), threads: 1, chatWrapper: 'chatML' }),
    images: false,
  },
  'messages-upstream': {
    model: 'upstream',
    config: async () => ({ type: 'messages-upstream', baseURL: upstream.baseURL }),
    sent: () => {
      const body = lastUpstreamBody();
      return { tools: (body.tools ?? []).map((tool) => tool.name), messages: JSON.stringify(body.messages) };
    },
    images: true,
  },
  'openai-compatible': {
    model: 'vllm',
    config: async () => ({ type: 'openai-compatible', engine: 'vllm', baseURL: engine.baseURL, model: engine.model }),
    sent: () => {
      const body = lastEngineBody();
      return { tools: (body.tools ?? []).map((tool) => tool.function.name), messages: JSON.stringify(body.messages) };
    },
    images: true,
    answerNext: () => engine.reply({ fixture: 'text' }),
  },
};

/** How a request sets a call field that some kind refuses, and the field's name in the request. */
const REQUEST_FIELDS: Partial<Record<CallField, { field: string; body: Record<string, unknown> }>> = {
  'sampling.temperature': { field: 'temperature', body: { temperature: 0.5 } },
  'sampling.topP': { field: 'top_p', body: { top_p: 0.5 } },
  'sampling.topK': { field: 'top_k', body: { top_k: 5 } },
  'sampling.stopSequences': { field: 'stop_sequences', body: { stop_sequences: ['never'] } },
  'passOn.metadata': { field: 'metadata', body: { metadata: { user_id: 'someone' } } },
  'passOn.serviceTier': { field: 'service_tier', body: { service_tier: 'auto' } },
};

/** The service's key, so that search results made here verify there. */
const SIGNING_KEY = Buffer.alloc(32, 8);
const signer = new Signer(SIGNING_KEY);

let service: RunningService;
let engine: FakeOpenAiEngine;
let ollama: FakeOpenAiEngine;
let upstream: RawUpstream;
/** Each model served here and its backend's config. */
const served: Array<{ model: BackendName; config: Record<string, unknown> }> = [];

before(async () => {
  engine = await FakeOpenAiEngine.start('vllm');
  ollama = await FakeOpenAiEngine.start('ollama');
  upstream = await rawUpstream((request, response) => {
    if (answerCount(request, response)) return;
    response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames(streamOf('Upstream answer.')));
  });
  for (const kind of BACKEND_KINDS)
    served.push({ model: KINDS[kind.type].model, config: await KINDS[kind.type].config() });
  served.push({
    model: 'ollama',
    config: { type: 'openai-compatible', engine: 'ollama', baseURL: ollama.baseURL, model: ollama.model },
  });
  service = await startService(
    {
      models: served.map(({ model, config }) => ({
        id: model,
        tier: 'mid' as const,
        generation: 'older' as const,
        contextWindow: 4096,
        maxOutputTokens: 1024,
        backend: config as never,
      })),
    },
    process.cwd(),
    { signingKey: SIGNING_KEY },
  );
});

after(async () => {
  await service.close();
  await engine.close();
  await ollama.close();
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

test('every registered kind is tried here', () => {
  assert.deepEqual(
    BACKEND_KINDS.map(
      (kind) =>
        backendKindOf(backendConfig.parse(served.find((each) => each.model === KINDS[kind.type].model)!.config)).type,
    ),
    BACKEND_KINDS.map((kind) => kind.type),
  );
});

describe('server tools are offered to the model on every backend', () => {
  const withSearch = { messages: [{ role: 'user', content: 'Find otters.' }], tools: [LOOKUP, SEARCH] };
  const withoutSearch = { messages: [{ role: 'user', content: 'Find otters.' }], tools: [LOOKUP] };

  for (const kind of BACKEND_KINDS) {
    const { model, sent, answerNext } = KINDS[kind.type];
    if (sent) {
      test(`${kind.type}: web_search goes to the engine as a tool beside the custom tool`, async () => {
        answerNext?.();
        const { status } = await post('/v1/messages', model, withSearch);
        assert.equal(status, 200);
        assert.deepEqual(sent().tools, ['lookup', 'web_search']);
      });
    } else {
      test(`${kind.type}: web_search is part of the prompt, so it counts`, async () => {
        const counted = await post('/v1/messages/count_tokens', model, withSearch);
        const without = await post('/v1/messages/count_tokens', model, withoutSearch);
        assert.equal(counted.status, 200, JSON.stringify(counted.reply));
        assert.ok(
          counted.reply.input_tokens! > without.reply.input_tokens!,
          `${counted.reply.input_tokens} tokens with web_search, ${without.reply.input_tokens} without`,
        );
      });
    }
  }
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

  for (const kind of BACKEND_KINDS) {
    const { model, sent, answerNext } = KINDS[kind.type];
    if (sent) {
      test(`${kind.type}: the engine is sent the result's text`, async () => {
        answerNext?.();
        const { status } = await post('/v1/messages', model, conversation);
        assert.equal(status, 200);
        const messages = sent().messages;
        assert.ok(messages.includes(text), messages);
        assert.ok(!messages.includes('mms2:'), messages);
      });
    } else {
      test(`${kind.type}: the result's text is what counts, not its encoding`, async () => {
        // The same result with its text twice counts the text's own tokens more; its base64 would
        // count otherwise.
        const longer = structuredClone(conversation);
        const result = (longer.messages[1]!.content as Array<{ content?: Array<{ encrypted_content: string }> }>)[1]!
          .content![0]!;
        result.encrypted_content = encodeSearchContent(signer, 'https://a.example/otters', `${text} ${text}`);
        const count = async (body: Record<string, unknown>) =>
          (await post('/v1/messages/count_tokens', model, body)).reply.input_tokens!;
        const added = (await count(longer)) - (await count(conversation));
        const textAlone =
          (await count({ messages: [{ role: 'user', content: `x ${text}` }] })) -
          (await count({ messages: [{ role: 'user', content: 'x' }] }));
        assert.equal(added, textAlone);
      });
    }
  }
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

  for (const kind of BACKEND_KINDS) {
    const { model, sent, images } = KINDS[kind.type];
    if (!images) {
      test(`${kind.type}: a 400 naming the block, in the words of an image in a user turn`, async () => {
        for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
          const { status, reply } = await post(path, model, withImage);
          assert.equal(status, 400, path);
          assert.equal(
            reply.error?.message,
            `messages.2.content.0.content.0: images are not supported by the ${kind.type} backend`,
          );
        }
      });
    } else {
      test(`${kind.type}: the image is part of what the model is given`, async () => {
        const { status } = await post('/v1/messages', model, withImage);
        assert.equal(status, 200);
        if (sent) assert.ok(sent().messages.includes('iVBORw0KGgo='), sent().messages);
      });
    }
  }

  test('openai-compatible: the image follows the tool message in a user message', async () => {
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

  test('messages-upstream: the image goes upstream inside its tool_result', async () => {
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

describe('what a kind declares it refuses, it refuses with a 400 naming the field', () => {
  test('each refused field of each model served here, set in a request', async () => {
    let tried = 0;
    for (const { model, config } of served) {
      const parsed = backendConfig.parse(config);
      const uses = backendKindOf(parsed).callFields(parsed);
      for (const [field, use] of Object.entries(uses) as Array<[CallField, (typeof uses)[CallField]]>) {
        if (use.use !== 'refused') continue;
        const setting = REQUEST_FIELDS[field];
        assert.ok(setting, `${model} refuses ${field}: say in REQUEST_FIELDS how a request sets it`);
        const { status, reply } = await post('/v1/messages', model, {
          messages: [{ role: 'user', content: 'Hi.' }],
          ...setting.body,
        });
        assert.equal(status, 400, `${model}, ${field}: ${JSON.stringify(reply)}`);
        assert.ok(reply.error?.message.startsWith(`${setting.field}: `), reply.error?.message);
        tried += 1;
      }
    }
    assert.ok(tried > 0, 'no model here refuses a field: the check checks nothing');
  });
});
