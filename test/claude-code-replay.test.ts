/**
 * Claude Code's own requests (packages/testing/fixtures/claude-code/, recorded from the CLI;
 * `npm run check:claude-code -- --record` records new ones) replayed against every backend: each
 * gets a whole 200 stream. What they carry that the contract alone does not (system messages
 * mid-conversation, thinking display omitted, context_management, effort, a deferred tool, its
 * WebSearch's `web_search_20250305` server tool (issue 34), `?beta=true`, `claude-*` ids,
 * max_tokens 128000) must pass on the scripted, embedded llama.cpp, OpenAI-compatible and
 * Messages upstream backends alike. The CLI itself is driven in claude-code-cli.test.ts, where it
 * can be installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  claudeCodeRequests,
  FakeOpenAiEngine,
  readSse,
  startService,
  tinyLlamaModel,
  type RecordedClientRequest,
  type RunningService,
} from '@model-messages/testing';
import type { ServiceConfigInput } from '@model-messages/server';

const RECORDED = claudeCodeRequests();

/** One model that takes every id Claude Code picks, and lowers its max_tokens to the limit. */
type ModelBackend = ServiceConfigInput['models'][number]['backend'];

function claudeModel(backend: ModelBackend, limits: { contextWindow: number; maxOutputTokens: number }) {
  return {
    id: 'house-model',
    aliases: ['claude-*'],
    tier: 'large' as const,
    generation: 'newer' as const,
    maxTokens: 'clamp' as const,
    ...limits,
    backend,
  };
}

/** Sends the request as recorded: its URL, its headers (the key and version are the service's). */
async function replay(service: RunningService, recorded: RecordedClientRequest): Promise<Response> {
  return fetch(`${service.baseURL}${recorded.url}`, {
    method: recorded.method,
    headers: { ...recorded.headers, 'x-api-key': service.apiKey },
    body: JSON.stringify(recorded.body),
  });
}

async function assertWholeStream(response: Response): Promise<void> {
  const events = await readSse(response.clone());
  assert.equal(response.status, 200, JSON.stringify(events).slice(0, 600));
  assert.equal(response.headers.get('mms-max-tokens-clamped')?.startsWith('128000 -> '), true);
  const types = events.map((event) => event.event);
  assert.equal(types[0], 'message_start');
  assert.equal(types.at(-1), 'message_stop');
  assert.ok(!types.includes('error'), JSON.stringify(events.filter((event) => event.event === 'error')));
  const start = events[0]!.data as unknown as { message: { model: string } };
  assert.equal(start.message.model, 'house-model');
}

describe('Claude Code requests replayed: scripted backend', () => {
  let service: RunningService;
  before(async () => {
    service = await startService({
      models: [claudeModel({ type: 'scripted' }, { contextWindow: 200_000, maxOutputTokens: 64_000 })],
    });
  });
  after(() => service.close());

  for (const recorded of RECORDED)
    test(`${recorded.name}: a whole 200 stream`, async () => assertWholeStream(await replay(service, recorded)));

  test('count_tokens takes the same body (less what only messages take)', async () => {
    const recorded = RECORDED.find((entry) => entry.name === 'write-tool-result')!;
    const { max_tokens: _maxTokens, stream: _stream, metadata: _metadata, ...conversation } = recorded.body;
    const response = await fetch(`${service.baseURL}/v1/messages/count_tokens?beta=true`, {
      method: 'POST',
      headers: { ...recorded.headers, 'x-api-key': service.apiKey },
      body: JSON.stringify(conversation),
    });
    const counted = (await response.json()) as { input_tokens: number };
    assert.equal(response.status, 200, JSON.stringify(counted));
    assert.ok(counted.input_tokens > 1000);
  });
});

describe('Claude Code requests replayed: embedded llama.cpp backend', () => {
  let service: RunningService;
  before(async () => {
    // The smallest shape llama.cpp's flash attention takes (one layer, one head of 16): the prompt
    // is ~32,500 of its tokens, and attending over them is the whole cost, ~7x that of the default
    // 64x2 model. What is replayed here is the service around the engine, not the model.
    const model = await tinyLlamaModel({
      contextLength: 131_072,
      embeddingSize: 16,
      heads: 1,
      kvHeads: 1,
      layers: 1,
    });
    service = await startService({
      models: [
        claudeModel(
          { type: 'llama-cpp', model, threads: 1, concurrency: 1 },
          { contextWindow: 131_072, maxOutputTokens: 16 },
        ),
      ],
    });
  });
  after(() => service.close());

  // The first request is ~32,500 tokens of the tiny vocabulary, ~2 s of prefill on this shape.
  // The tool result, of another conversation, shares its system prompt and tools once Claude
  // Code's billing header is left out of the prompt (call-builder/client-metadata.ts): the engine reuses
  // them. The Write request reads as the first does.
  test('plain-prompt: a whole 200 stream', async () =>
    assertWholeStream(
      await replay(
        service,
        RECORDED.find((entry) => entry.name === 'plain-prompt')!,
      ),
    ));

  test("write-tool-result: a whole 200 stream, another conversation's system prompt and tools reused", async () => {
    const response = await replay(
      service,
      RECORDED.find((entry) => entry.name === 'write-tool-result')!,
    );
    await assertWholeStream(response);
    const events = await readSse(response);
    const usage = (events.at(-2)!.data as unknown as { usage: Record<string, number> }).usage;
    assert.ok(usage.cache_read_input_tokens! > 10_000, JSON.stringify(usage));
  });

  // WebSearch's own request: a short prompt and the dated web search tool, which the model may call;
  // last, as the one sequence it evaluates holds the Claude Code prefix until then.
  test('web-search: a whole 200 stream', async () =>
    assertWholeStream(
      await replay(
        service,
        RECORDED.find((entry) => entry.name === 'web-search')!,
      ),
    ));
});

describe('Claude Code requests replayed: OpenAI-compatible backend (vLLM)', () => {
  let service: RunningService;
  let engine: FakeOpenAiEngine;
  before(async () => {
    engine = await FakeOpenAiEngine.start('vllm');
    service = await startService({
      models: [
        claudeModel(
          { type: 'openai-compatible', engine: 'vllm', baseURL: engine.baseURL, model: engine.model },
          { contextWindow: 200_000, maxOutputTokens: 32_000 },
        ),
      ],
    });
  });
  after(async () => {
    await service.close();
    await engine.close();
  });

  for (const recorded of RECORDED)
    test(`${recorded.name}: a whole 200 stream, system messages at their place`, async () => {
      await assertWholeStream(await replay(service, recorded));
      const sent = engine.chatBodies().at(-1)!;
      const roles = (sent.messages as Array<{ role: string }>).map((message) => message.role);
      const tools = (sent.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
      // The system prompt first, then the conversation.
      assert.equal(roles[0], 'system');
      if (recorded.name === 'web-search') {
        // WebSearch's own request offers the one server tool, which mms runs.
        assert.deepEqual(tools, ['web_search']);
        return;
      }
      // Claude Code's environment note as a system message where it stood (after the user turn;
      // after the tool results, when there are).
      assert.ok(roles.slice(1).includes('system'), roles.join(','));
      assert.ok(tools.includes('Write'));
      assert.ok(!tools.includes('DeferredToolPlaceholder'), 'a defer_loading tool is not offered until loaded');
    });
});

describe('Claude Code requests replayed: Messages upstream backend', () => {
  let upstream: RunningService;
  let front: RunningService;
  before(async () => {
    upstream = await startService({
      models: [
        {
          id: 'upstream-model',
          tier: 'large',
          generation: 'newer',
          contextWindow: 200_000,
          maxOutputTokens: 4096,
          backend: { type: 'scripted' },
        },
      ],
    });
    front = await startService({
      models: [
        claudeModel(
          { type: 'messages-upstream', baseURL: upstream.baseURL, apiKey: upstream.apiKey, model: 'upstream-model' },
          { contextWindow: 200_000, maxOutputTokens: 2048 },
        ),
      ],
    });
  });
  after(async () => {
    await front.close();
    await upstream.close();
  });

  for (const recorded of RECORDED)
    test(`${recorded.name}: a whole 200 stream`, async () => assertWholeStream(await replay(front, recorded)));
});
