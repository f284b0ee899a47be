/**
 * A fallback list whose primary is an openai-compatible engine (the fake vLLM): a 503, no first
 * byte within `firstByteTimeoutMs`, and a refused connection each move the request to the next
 * backend, named by the `mms-backend` header; a 503 is charged to the engine's circuit, while a
 * missing tokenizer endpoint and a bad sample of model output are not. A tokenizer endpoint
 * that hangs moves the request on at once, uncharged. The same bad sample behind an mms
 * upstream keeps its meaning through its code, which its stream's error event carries
 * (`mms_error_code`) as its status reply's `mms-error-code` header does.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServiceConfigInput } from '@model-messages/server';
import {
  closedPortURL,
  FakeOpenAiEngine,
  postJson,
  readSse,
  startService,
  type RunningService,
} from '@model-messages/testing';

interface ErrorBody {
  error: { type: string; message: string };
}

interface Reply {
  content: Array<{ type: string; text?: string }>;
}

const base = {
  id: 'mid',
  aliases: [],
  tier: 'mid',
  generation: 'newer',
  contextWindow: 4096,
  maxOutputTokens: 2048,
} as const;
const hello = { model: 'mid', max_tokens: 100, messages: [{ role: 'user', content: 'Hello, whoever answers.' }] };

function fallbackModel(backends: unknown[], fallback: Record<string, unknown>): ServiceConfigInput['models'] {
  return [{ ...base, backends, fallback } as never];
}

describe('an openai-compatible primary (a fake vLLM) with a scripted fallback', () => {
  let engine: FakeOpenAiEngine;
  /** A threshold no test reaches: the answer of each request alone. */
  let lenient: RunningService;
  /** One failure opens the circuit: a test sees at once whether a failure was charged. */
  let strict: RunningService;
  const primary = (extra: Record<string, unknown> = {}) => ({
    type: 'openai-compatible',
    engine: 'vllm',
    baseURL: engine.baseURL,
    model: engine.model,
    // Long enough for an answer on a loaded machine (300 ms was not always), short for a stall.
    firstByteTimeoutMs: 1_000,
    ...extra,
  });
  const answeredBy = async (service: RunningService, body: Record<string, unknown> = hello) => {
    const response = await postJson(service, '/v1/messages', body);
    return {
      status: response.status,
      backend: response.headers.get('mms-backend'),
      body: (await response.json()) as Reply & ErrorBody,
    };
  };

  before(async () => {
    engine = await FakeOpenAiEngine.start('vllm');
    lenient = await startService({
      models: fallbackModel([primary(), { type: 'scripted' }], { failureThreshold: 1000 }),
    });
    strict = await startService({
      models: fallbackModel([primary(), { type: 'scripted' }], { failureThreshold: 1, cooldownMs: 3_600_000 }),
    });
  });
  after(async () => {
    await lenient.close();
    await strict.close();
    await engine.close();
  });

  test('a healthy engine answers, and the header names it', async () => {
    const { status, backend, body } = await answeredBy(lenient);
    assert.equal(status, 200);
    assert.equal(backend, 'openai-compatible:vllm');
    assert.equal(body.content[0]?.text, 'Paris is the capital of France.');
  });

  test('the engine answering 503: the next backend answers', async () => {
    engine.reply({ status: 503, body: { error: { message: 'The request queue is full', code: 503 } } });
    const { status, backend, body } = await answeredBy(lenient);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(backend, 'scripted');
  });

  test('no first byte within firstByteTimeoutMs: the next backend answers', async () => {
    const chats = engine.chatBodies().length;
    engine.reply({ stall: 'before-headers' });
    const { status, backend } = await answeredBy(lenient);
    assert.equal(status, 200);
    assert.equal(backend, 'scripted');
    assert.equal(engine.chatBodies().length, chats + 1, 'the engine was asked first');
  });

  test('a refused connection: the next backend answers', async () => {
    const down = { type: 'openai-compatible', engine: 'vllm', baseURL: `${await closedPortURL()}/v1`, model: 'm' };
    const service = await startService({ models: fallbackModel([down, { type: 'scripted' }], {}) });
    try {
      const { status, backend } = await answeredBy(service);
      assert.equal(status, 200);
      assert.equal(backend, 'scripted');
    } finally {
      await service.close();
    }
  });

  test("a 503 is charged to the engine's circuit: with a threshold of 1 the next request skips it", async () => {
    const service = await startService({
      models: fallbackModel([primary(), { type: 'scripted' }], { failureThreshold: 1, cooldownMs: 3_600_000 }),
    });
    try {
      engine.reply({ fixture: 'sglang/error-503' });
      assert.equal((await answeredBy(service)).backend, 'scripted');
      const chats = engine.chatBodies().length;
      assert.equal((await answeredBy(service)).backend, 'scripted');
      assert.equal(engine.chatBodies().length, chats, 'the open circuit keeps requests off the engine');
    } finally {
      await service.close();
    }
  });

  test('a tokenizer endpoint the engine does not serve costs nothing: the engine answers and its circuit stays closed', async () => {
    engine.missingPaths.add('/tokenize');
    try {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const { status, backend } = await answeredBy(strict);
        assert.equal(status, 200);
        assert.equal(backend, 'openai-compatible:vllm');
      }
    } finally {
      engine.missingPaths.delete('/tokenize');
    }
  });

  test('a tokenizer endpoint that hangs costs one first-byte limit: the next backend counts and answers, the engine is not asked to generate, and its circuit stays closed', async () => {
    // Its own service: another test's missing endpoint leaves a shared one's tokenizer alone for a minute.
    // Every request counted by the endpoint: by default a short prompt is not (prompt-token-counter.ts).
    const service = await startService({
      models: fallbackModel([primary({ countTokens: 'every-request' }), { type: 'scripted' }], {
        failureThreshold: 1,
        cooldownMs: 3_600_000,
      }),
    });
    const chats = engine.chatBodies().length;
    engine.pathReplies.set('/tokenize', { stall: true });
    try {
      const { status, backend } = await answeredBy(service);
      assert.equal(status, 200);
      assert.equal(backend, 'scripted');
      assert.equal(engine.chatBodies().length, chats, 'the hung engine was not waited on a second time');
      engine.pathReplies.delete('/tokenize');
      assert.equal((await answeredBy(service)).backend, 'openai-compatible:vllm');
    } finally {
      engine.pathReplies.delete('/tokenize');
      await service.close();
    }
  });

  test("the model's output failing its schema is the reply's 502, not retried on the fallback nor charged to the circuit", async () => {
    const format = {
      output_config: {
        format: {
          type: 'json_schema',
          schema: {
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
            additionalProperties: false,
          },
        },
      },
    };
    // Guided output that is not JSON: the engine broke its guarantee on this one sample.
    engine.reply({ fixture: 'text' });
    const failed = await answeredBy(strict, { ...hello, ...format });
    assert.equal(failed.status, 502);
    assert.equal(failed.body.error.type, 'api_error');
    assert.match(failed.body.error.message, /the model's answer failed output_config\.format\.schema/);
    const next = await answeredBy(strict);
    assert.equal(next.status, 200);
    assert.equal(next.backend, 'openai-compatible:vllm');
  });
});

describe('an mms upstream (itself in front of a generic engine) as the primary, a scripted fallback', () => {
  let engine: FakeOpenAiEngine;
  let upstream: RunningService;
  let front: RunningService;
  // A generic engine cannot guide a format: the upstream holds the answer, checks it, asks once
  // more, and fails before any output when both fail (the engine's `text` is prose): a 502 to a
  // JSON request, an error event to a stream, which the front's requests always are.
  const format = {
    output_config: {
      format: {
        type: 'json_schema',
        schema: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
          additionalProperties: false,
        },
      },
    },
  };

  before(async () => {
    engine = await FakeOpenAiEngine.start('generic');
    upstream = await startService({
      models: [
        {
          ...base,
          backend: { type: 'openai-compatible', engine: 'generic', baseURL: engine.baseURL, model: engine.model },
        } as never,
      ],
    });
    const primary = { type: 'messages-upstream', baseURL: upstream.baseURL, apiKey: upstream.apiKey };
    // One charged failure would open the primary's circuit.
    front = await startService({
      models: fallbackModel([primary, { type: 'scripted' }], { failureThreshold: 1, cooldownMs: 3_600_000 }),
    });
  });
  after(async () => {
    await front.close();
    await upstream.close();
    await engine.close();
  });

  test("the upstream's model_output_invalid names its code in mms-error-code, beside the 502 api_error", async () => {
    const response = await postJson(upstream, '/v1/messages', { ...hello, ...format });
    assert.equal(response.status, 502);
    assert.equal(response.headers.get('mms-error-code'), 'model_output_invalid');
    assert.equal(((await response.json()) as ErrorBody).error.type, 'api_error');
  });

  test("streamed, the upstream's stream opened at admission: the code rides in the error event", async () => {
    const response = await postJson(upstream, '/v1/messages', { ...hello, ...format, stream: true });
    assert.equal(response.status, 200);
    const error = (await readSse(response)).at(-1)?.data as Record<string, unknown>;
    assert.equal((error.error as ErrorBody['error']).type, 'api_error');
    assert.equal(error.mms_error_code, 'model_output_invalid');
  });

  test('through the front it stays model_output_invalid: the reply is the 502, not the fallback, and the circuit stays closed', async () => {
    const failed = await postJson(front, '/v1/messages', { ...hello, ...format });
    assert.equal(failed.status, 502, await failed.clone().text());
    assert.equal(failed.headers.get('mms-error-code'), 'model_output_invalid');
    assert.match(
      ((await failed.json()) as ErrorBody).error.message,
      /the model's answer failed output_config\.format\.schema twice/,
    );
    const next = await postJson(front, '/v1/messages', hello);
    assert.equal(next.status, 200);
    assert.equal(next.headers.get('mms-backend'), 'messages-upstream');
  });
});
