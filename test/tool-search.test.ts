/**
 * Tool search run by the service (issue 34): a request offers `tool_search_tool_regex` or
 * `tool_search_tool_bm25` beside deferred tools; the model searches, the service answers a
 * `tool_search_tool_result` whose `tool_reference`s name the tools found, and those tools are
 * offered to the model in the same turn, so it calls one: on the scripted backend, on an
 * OpenAI-compatible engine and through a Messages upstream (what each step was told), and on the
 * embedded engine, where a tiny model writes its calls in Qwen's syntax and node-llama-cpp's own
 * grammar holds each call's name to the tools offered at that step. A turn sent back keeps the
 * tools it found loaded.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FakeOpenAiEngine,
  modelsWithBackend,
  postJson,
  qwenTurnPieces,
  readSse,
  RecordingProxy,
  scriptedModels,
  scriptedQwenModel,
  startService,
  type RunningService,
} from '@model-messages/testing';
import { vllmModel } from './openai-compatible-support.js';

interface Block {
  type: string;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  tool_use_id?: string;
  content?: { type?: string; tool_references?: Array<{ type: string; tool_name: string }>; error_code?: string };
}

interface Reply {
  content: Block[];
  stop_reason: string;
}

/** Deferred tools whose one parameter is `query`, as tool search's is: the embedded model writes one call shape. */
const deferred = (name: string, description: string) => ({
  name,
  description,
  input_schema: { type: 'object', properties: { query: { type: 'string', description: 'What to ask.' } } },
  defer_loading: true,
});
const CATALOG = [
  deferred('get_weather', 'The weather in a city.'),
  deferred('send_email', 'Send an email to someone.'),
  deferred('list_files', 'List the files of a folder.'),
];
const REGEX = { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' };
const BM25 = { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' };

function referencesIn(reply: Reply): string[] {
  return reply.content
    .filter((block) => block.type === 'tool_search_tool_result')
    .flatMap((block) => block.content?.tool_references?.map((reference) => reference.tool_name) ?? []);
}

/** The reply found get_weather by tool search and then called it, in this one turn. */
function assertFoundThenCalled(reply: Reply, searchName: string): void {
  const types = reply.content.map((block) => `${block.type}${block.name ? `:${block.name}` : ''}`);
  const search = types.indexOf(`server_tool_use:${searchName}`);
  const call = types.indexOf('tool_use:get_weather');
  assert.ok(search >= 0 && call > search, types.join(', '));
  assert.equal(reply.content[search + 1]!.type, 'tool_search_tool_result');
  assert.equal(reply.content[search + 1]!.tool_use_id, reply.content[search]!.id);
  assert.ok(referencesIn(reply).includes('get_weather'), JSON.stringify(reply.content));
  assert.equal(reply.stop_reason, 'tool_use');
}

async function ask(service: RunningService, model: string, body: Record<string, unknown>): Promise<Reply> {
  const response = await postJson(service, '/v1/messages', {
    model,
    max_tokens: 200,
    messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    ...body,
  });
  const reply = (await response.json()) as Reply;
  assert.equal(response.status, 200, JSON.stringify(reply));
  return reply;
}

describe('tool search on the scripted backend', () => {
  let service: RunningService;
  before(async () => {
    const script = join(mkdtempSync(join(tmpdir(), 'mms-tool-search-')), 'script.json');
    const steps = (name: string, query: string) => [
      [{ type: 'server_tool_use', name, input: { query } }],
      [{ type: 'tool_use', name: 'get_weather', input: { query: 'Paris' } }],
    ];
    writeFileSync(
      script,
      JSON.stringify([
        { when: 'by pattern', steps: steps('tool_search_tool_regex', '(?i)WEATHER') },
        { when: 'by words', steps: steps('tool_search_tool_bm25', 'weather in a city') },
      ]),
    );
    service = await startService({
      models: [
        {
          id: 'scripted',
          tier: 'large',
          generation: 'newer',
          contextWindow: 8_192,
          maxOutputTokens: 1_024,
          backend: { type: 'scripted', script },
        },
      ],
    });
  });
  after(() => service.close());

  test('a regex search finds the deferred tool, and the model calls it in the same turn', async () => {
    const reply = await ask(service, 'scripted', {
      tools: [REGEX, ...CATALOG],
      messages: [{ role: 'user', content: 'Find it by pattern.' }],
    });
    assertFoundThenCalled(reply, 'tool_search_tool_regex');
    assert.deepEqual(referencesIn(reply), ['get_weather']);
  });

  test('a BM25 search finds it by words, and the model calls it in the same turn; streamed too', async () => {
    const body = { tools: [BM25, ...CATALOG], messages: [{ role: 'user', content: 'Find it by words.' }] };
    const reply = await ask(service, 'scripted', body);
    assertFoundThenCalled(reply, 'tool_search_tool_bm25');
    assert.equal(referencesIn(reply)[0], 'get_weather');
    const response = await postJson(service, '/v1/messages', {
      model: 'scripted',
      max_tokens: 200,
      stream: true,
      ...body,
    });
    const started = (await readSse(response))
      .filter((event) => event.event === 'content_block_start')
      .map((event) => (event.data.content_block as { type: string }).type);
    assert.deepEqual(started, ['server_tool_use', 'tool_search_tool_result', 'tool_use']);
  });

  test('bad input: a deferred tool search tool, every tool deferred, and a tool_reference naming no tool, are 400s naming the field', async () => {
    const refused = async (body: Record<string, unknown>) => {
      const response = await postJson(service, '/v1/messages', {
        model: 'scripted',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'hi' }],
        ...body,
      });
      assert.equal(response.status, 400);
      return ((await response.json()) as { error: { message: string } }).error.message;
    };
    assert.equal(
      await refused({ tools: [{ ...REGEX, defer_loading: true }, ...CATALOG] }),
      'tools.0.defer_loading: the tool search tool "tool_search_tool_regex" cannot be deferred: it is what finds the deferred tools',
    );
    assert.match(await refused({ tools: CATALOG }), /^tools: every tool has defer_loading: true/);
    const found = (toolName: string) => ({
      type: 'tool_search_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: {
        type: 'tool_search_tool_search_result',
        tool_references: [{ type: 'tool_reference', tool_name: toolName }],
      },
    });
    const search = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'tool_search_tool_regex', input: { query: 'x' } };
    const conversation = (result: unknown) => [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [search, result, { type: 'text', text: 'Found.' }] },
      { role: 'user', content: 'go on' },
    ];
    assert.equal(
      await refused({ tools: [REGEX, ...CATALOG], messages: conversation(found('no_such_tool')) }),
      'messages.1.content.1.content.tool_references.0: tool_reference names "no_such_tool", which is not among the tools',
    );
    assert.match(
      await refused({
        tools: [REGEX, ...CATALOG],
        messages: conversation({ ...found('get_weather'), content: { type: 'tool_search_tool_search_result' } }),
      }),
      /^messages\.1\.content\.1\.content\.tool_references: /,
    );
    const failed = (errorCode: string) => ({
      type: 'tool_search_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: { type: 'tool_search_tool_result_error', error_code: errorCode },
    });
    assert.match(
      await refused({ tools: [REGEX, ...CATALOG], messages: conversation(failed('no_such_code')) }),
      /^messages\.1\.content\.1\.content\.error_code: /,
    );
  });
});

describe('tool search on an OpenAI-compatible engine', () => {
  let engine: FakeOpenAiEngine;
  let service: RunningService;
  before(async () => {
    engine = await FakeOpenAiEngine.start('vllm');
    service = await startService({ models: [vllmModel(engine)] });
  });
  after(async () => {
    await service.close();
    await engine.close();
  });

  /** One streamed chat completion that calls `name` with `input`. */
  const calling = (name: string, input: Record<string, unknown>) => ({
    stream: [
      {
        choices: [
          {
            index: 0,
            delta: {
              role: 'assistant',
              tool_calls: [
                { index: 0, id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(input) } },
              ],
            },
          },
        ],
      },
      {
        choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
        usage: { prompt_tokens: 50, completion_tokens: 9 },
      },
    ],
  });

  test("the engine is offered the tool its search found at the turn's next step, and calls it", async () => {
    engine.reply(calling('tool_search_tool_regex', { query: 'weather' }), calling('get_weather', { query: 'Paris' }));
    const reply = await ask(service, 'vllm', { tools: [REGEX, ...CATALOG] });
    assertFoundThenCalled(reply, 'tool_search_tool_regex');
    const offered = engine
      .chatBodies()
      .slice(-2)
      .map((body) => (body.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name));
    assert.deepEqual(offered, [['tool_search_tool_regex'], ['tool_search_tool_regex', 'get_weather']]);
    // The search's result reaches the engine as the text a model reads.
    const messages = engine.lastChatBody().messages as Array<{ role: string; content: unknown }>;
    assert.match(
      String(messages.find((message) => message.role === 'tool')?.content),
      /Tool search found: get_weather/,
    );
  });

  test('the turn sent back keeps what it found loaded: the next request offers it from its first step', async () => {
    engine.reply(calling('tool_search_tool_regex', { query: 'weather' }), calling('get_weather', { query: 'Paris' }));
    const first = await ask(service, 'vllm', { tools: [REGEX, ...CATALOG] });
    engine.reply(calling('get_weather', { query: 'Lyon' }));
    const reply = await ask(service, 'vllm', {
      tools: [REGEX, ...CATALOG],
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: first.content.at(-1)!.id, content: 'Sunny.' }] },
        { role: 'assistant', content: 'It is sunny.' },
        { role: 'user', content: 'And in Lyon?' },
      ],
    });
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.name]),
      [['tool_use', 'get_weather']],
    );
    const offered = (engine.lastChatBody().tools as Array<{ function: { name: string } }>).map(
      (tool) => tool.function.name,
    );
    assert.deepEqual(offered, ['tool_search_tool_regex', 'get_weather']);
  });
});

describe('tool search through a Messages upstream', () => {
  let upstream: RunningService;
  let proxy: RecordingProxy;
  let front: RunningService;
  before(async () => {
    // The upstream, another mms on the scripted backend, sees the tool search as a custom tool of
    // that name: its model calls it, then the tool the search found.
    const script = join(mkdtempSync(join(tmpdir(), 'mms-tool-search-upstream-')), 'script.json');
    writeFileSync(
      script,
      JSON.stringify([
        {
          when: '^What is the weather',
          steps: [
            [{ type: 'tool_use', name: 'tool_search_tool_bm25', input: { query: 'weather in a city' } }],
            [{ type: 'tool_use', name: 'get_weather', input: { query: 'Paris' } }],
          ],
        },
      ]),
    );
    upstream = await startService({ models: scriptedModels({ script }) });
    proxy = await RecordingProxy.start(upstream.baseURL);
    front = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: proxy.baseURL, apiKey: upstream.apiKey }),
    });
  });
  after(async () => {
    await front.close();
    await proxy.close();
    await upstream.close();
  });

  test("the upstream is offered the tool its search found at the turn's next step, and calls it", async () => {
    const reply = await ask(front, 'large', { tools: [BM25, ...CATALOG] });
    assertFoundThenCalled(reply, 'tool_search_tool_bm25');
    const offered = proxy.requests
      // One request per step; the upstream's count of the prompt left out.
      .filter((request) => request.url.startsWith('/v1/messages') && !request.url.includes('count_tokens'))
      .map((request) => (request.body!.tools as Array<{ name: string }>).map((tool) => tool.name));
    // First the search alone; then, besides it, every tool it found (get_weather among them).
    const found = CATALOG.map((tool) => tool.name).filter((name) => referencesIn(reply).includes(name));
    assert.deepEqual(offered, [['tool_search_tool_bm25'], ['tool_search_tool_bm25', ...found]]);
  });
});

describe('tool search on the embedded engine', () => {
  let service: RunningService;
  before(async () => {
    // The model writes one call, get_weather's. At the first step get_weather is not offered and
    // node-llama-cpp's grammar holds the call's name to the tools that are: the tool search. Its
    // arguments, `{"query": "weather"}`, fit both. Once the search has found get_weather, the
    // next step is offered it, and the same output calls it.
    const model = await scriptedQwenModel(
      qwenTurnPieces({ call: { name: 'get_weather', argumentPieces: ['{"query": "weather"'] } }),
    );
    const entry = (id: string) => ({
      id,
      tier: 'mid' as const,
      generation: 'older' as const,
      contextWindow: 2_048,
      maxOutputTokens: 256,
      backend: { type: 'llama-cpp' as const, model, threads: 1, chatWrapper: 'qwen' as const },
    });
    service = await startService({ models: [entry('embedded')] });
  });
  after(() => service.close());

  for (const tool of [REGEX, BM25])
    test(`${tool.name}: the model searches, then calls the tool found, in one turn`, async () => {
      const reply = await ask(service, 'embedded', { tools: [tool, ...CATALOG], temperature: 0 });
      assertFoundThenCalled(reply, tool.name);
      assert.deepEqual(reply.content.at(-1)!.input, { query: 'weather' });
    });
});
