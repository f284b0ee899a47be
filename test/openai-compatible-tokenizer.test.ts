/**
 * count_tokens when the engine's tokenizer endpoint cannot count (a router that forwards only
 * `/v1/*`, a llama.cpp server older than `/apply-template`): the request is still answered,
 * counted by the estimate, with one warning, and the endpoint is asked again only after a
 * while, on a clock the test steps. An endpoint that fails as the engine fails (5xx, no answer)
 * fails the request instead, without a warning and without being left alone.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeOpenAiEngine, postJson, readSse, startService, type RunningService } from '@model-messages/testing';
import { TOKENIZER_RETRY_MS } from '../packages/server/src/backends/openai-compatible/prompt-token-counter.js';
import { user } from './openai-compatible-support.js';

interface ErrorBody {
  error: { type: string; message: string };
}

describe('a tokenizer endpoint that cannot count', () => {
  const clock = { now: 0 };
  const warnings: string[] = [];
  let service: RunningService;
  let vllm: FakeOpenAiEngine;
  let llama: FakeOpenAiEngine;
  let flaky: FakeOpenAiEngine;
  before(async () => {
    vllm = await FakeOpenAiEngine.start('vllm');
    llama = await FakeOpenAiEngine.start('llama.cpp');
    flaky = await FakeOpenAiEngine.start('vllm');
    // A router in front of vLLM that forwards only /v1/*; a llama.cpp older than /apply-template.
    vllm.missingPaths.add('/tokenize');
    llama.missingPaths.add('/apply-template');
    const model = (id: string, engine: FakeOpenAiEngine, extra: Record<string, unknown> = {}) =>
      engine.modelConfig(id, extra);
    service = await startService(
      {
        // Every message request counted by the endpoint: by default a short prompt is not (below).
        models: [
          model('routed', vllm, { countTokens: 'every-request' }),
          model('old-llama', llama, { countTokens: 'every-request' }),
          // Long enough for an answer on a loaded machine (300 ms was not always), short for a stall.
          model('flaky', flaky, { firstByteTimeoutMs: 1_000, countTokens: 'every-request' }),
        ],
      },
      process.cwd(),
      {
        registry: { now: () => clock.now, warn: (line) => warnings.push(line) },
      },
    );
  });
  after(async () => {
    await service.close();
    await vllm.close();
    await llama.close();
    await flaky.close();
  });
  const tokenizeCalls = (engine: FakeOpenAiEngine) =>
    engine.requests.filter((request) => request.path === '/tokenize').length;
  const send = (model: string) =>
    postJson(service, '/v1/messages', { model, max_tokens: 50, messages: [user('Hello')] });

  test('requests are answered, counted by estimate; one warning; the endpoint is left alone for a while, then asked again', async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await send('routed');
      assert.equal(response.status, 200, await response.clone().text());
    }
    assert.equal(tokenizeCalls(vllm), 1);
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      /^routed: openai-compatible:vllm at http:\/\/127\.0\.0\.1:\d+\/v1: the engine's tokenizer endpoint cannot count \(\/tokenize answered 404.*\); prompts are counted by estimate/,
    );
    const counted = (await (
      await postJson(service, '/v1/messages/count_tokens', { model: 'routed', messages: [user('Hello')] })
    ).json()) as { input_tokens: number };
    assert.equal(counted.input_tokens, Math.ceil('Hello'.length / 4) + 4);
    clock.now += TOKENIZER_RETRY_MS;
    const again = await send('routed');
    assert.equal(again.status, 200);
    assert.equal(tokenizeCalls(vllm), 2);
    assert.equal(warnings.length, 1, 'logged once while the endpoint stays missing');
  });

  test('an endpoint that comes back and is lost again is logged again, once', async () => {
    const before = warnings.length;
    vllm.missingPaths.delete('/tokenize');
    clock.now += TOKENIZER_RETRY_MS;
    const counted = (await (
      await postJson(service, '/v1/messages/count_tokens', { model: 'routed', messages: [user('Hello')] })
    ).json()) as { input_tokens: number };
    assert.equal(counted.input_tokens, vllm.tokenCount, 'the endpoint counts again');
    vllm.missingPaths.add('/tokenize');
    assert.equal((await send('routed')).status, 200);
    assert.equal(warnings.length, before + 1);
    clock.now += TOKENIZER_RETRY_MS;
    assert.equal((await send('routed')).status, 200);
    assert.equal(warnings.length, before + 1, 'still missing: not logged again');
  });

  test('a llama.cpp server without /apply-template answers too', async () => {
    const response = await send('old-llama');
    assert.equal(response.status, 200, await response.clone().text());
    assert.match(warnings.at(-1)!, /^old-llama: openai-compatible:llama\.cpp .*tokenizer endpoint cannot count/);
  });

  test('a 400 that refuses this one prompt is estimated for it alone: no warning, and the next request asks the endpoint', async () => {
    const before = warnings.length;
    flaky.pathReplies.set('/tokenize', {
      status: 400,
      body: { error: { message: 'chat template failed to render the messages', type: 'BadRequestError', code: 400 } },
    });
    try {
      assert.equal((await send('flaky')).status, 200);
    } finally {
      flaky.pathReplies.delete('/tokenize');
    }
    const calls = tokenizeCalls(flaky);
    assert.equal((await send('flaky')).status, 200);
    assert.equal(tokenizeCalls(flaky), calls + 1);
    assert.equal(warnings.length, before);
  });

  for (const [reply, status, type] of [
    [{ status: 500, body: { error: { message: 'tokenizer crashed' } } }, 500, 'api_error'],
    [{ status: 503, body: { error: { message: 'server is loading' } } }, 529, 'overloaded_error'],
    [{ stall: true }, 504, 'timeout_error'],
  ] as const) {
    test(`an endpoint that ${'stall' in reply ? 'does not answer' : `answers ${reply.status}`} fails the request as the engine would (${status}), without asking it to generate, and is asked again next time`, async () => {
      const before = warnings.length;
      const chats = flaky.chatBodies().length;
      flaky.pathReplies.set('/tokenize', reply);
      try {
        const response = await send('flaky');
        assert.equal(response.status, status);
        assert.equal(((await response.json()) as ErrorBody).error.type, type);
        assert.equal(
          flaky.chatBodies().length,
          chats,
          'a failing engine is not asked to generate after its count failed',
        );
      } finally {
        flaky.pathReplies.delete('/tokenize');
      }
      const calls = tokenizeCalls(flaky);
      assert.equal((await send('flaky')).status, 200);
      assert.equal(tokenizeCalls(flaky), calls + 1, 'not left alone: it was not missing');
      assert.equal(warnings.length, before, 'a transient failure is not logged as a missing endpoint');
    });
  }
});

describe('the default countTokens ("engine"): the endpoint counts where the count matters', () => {
  let service: RunningService;
  let vllm: FakeOpenAiEngine;
  let llama: FakeOpenAiEngine;
  before(async () => {
    vllm = await FakeOpenAiEngine.start('vllm');
    llama = await FakeOpenAiEngine.start('llama.cpp');
    const model = (id: string, engine: FakeOpenAiEngine) =>
      engine.modelConfig(id, {}, { contextWindow: 2048, maxOutputTokens: 1024 });
    service = await startService({ models: [model('vllm', vllm), model('llama.cpp', llama)] });
  });
  after(async () => {
    await service.close();
    await vllm.close();
    await llama.close();
  });
  const endpointCalls = (engine: FakeOpenAiEngine) =>
    engine.requests.filter((request) => request.path !== '/v1/chat/completions' && request.path !== '/v1/models')
      .length;
  const streamed = async (model: string, content: string) => {
    const response = await postJson(service, '/v1/messages', {
      model,
      max_tokens: 50,
      stream: true,
      messages: [user(content)],
    });
    assert.equal(response.status, 200, await response.clone().text());
    const events = (await readSse(response)).map((event) => event.data as Record<string, any>);
    return {
      start: events[0]!.message.usage.input_tokens as number,
      final: events.find((event) => event.type === 'message_delta')!.usage.input_tokens as number,
    };
  };

  test("a short prompt is not sent to the endpoint: message_start has the estimate, message_delta the engine's count", async () => {
    const calls = endpointCalls(vllm);
    // The recorded vLLM answer reports prompt_tokens 18.
    assert.deepEqual(await streamed('vllm', 'Hello'), { start: Math.ceil('Hello'.length / 4) + 4, final: 18 });
    assert.equal(endpointCalls(vllm), calls);
    const counted = (await (
      await postJson(service, '/v1/messages/count_tokens', { model: 'vllm', messages: [user('Hello')] })
    ).json()) as { input_tokens: number };
    assert.equal(counted.input_tokens, vllm.tokenCount, 'count_tokens is exact');
    assert.equal(endpointCalls(vllm), calls + 1);
  });

  test('a prompt whose upper bound (a token per byte) passes the window is counted by the endpoint first', async () => {
    // 700 characters of 3 bytes each: an estimate of 179 tokens, a bound of 2,100 and more.
    const long = '語'.repeat(700);
    // The recorded answers report prompt_tokens 18 (vLLM) and 20 (llama.cpp).
    for (const [engine, perCount, reported] of [
      [vllm, 1, 18],
      [llama, 2, 20],
    ] as const) {
      const calls = endpointCalls(engine);
      engine.tokenCount = 40;
      assert.deepEqual(await streamed(engine.kind, long), { start: 40, final: reported });
      assert.equal(endpointCalls(engine), calls + perCount);
      engine.tokenCount = 2_100;
      const chats = engine.chatBodies().length;
      const refused = await postJson(service, '/v1/messages', {
        model: engine.kind,
        max_tokens: 50,
        messages: [user(long)],
      });
      assert.equal(refused.status, 400);
      assert.equal(
        ((await refused.json()) as ErrorBody).error.message,
        'prompt is too long: 2100 tokens > 2048 maximum',
      );
      assert.equal(engine.chatBodies().length, chats, 'refused before generation');
      engine.tokenCount = 37;
    }
  });

  test('an engine that sends no usage: its endpoint counts the prompt afterwards, so the final usage is exact', async () => {
    vllm.tokenCount = 31;
    vllm.reply({
      stream: [{ choices: [{ index: 0, delta: { role: 'assistant', content: 'Noted.' }, finish_reason: 'stop' }] }],
    });
    const calls = endpointCalls(vllm);
    assert.deepEqual(await streamed('vllm', 'Hello'), { start: Math.ceil('Hello'.length / 4) + 4, final: 31 });
    assert.equal(endpointCalls(vllm), calls + 1);
    vllm.tokenCount = 37;
  });
});
