/**
 * GET /ready over HTTP: 200 when every model would be answered now, else 503, each model with
 * its backends' state; no key needed, as for /health. Scripted models are always ready; a
 * llama-cpp model with load "eager" once it is loaded, one with "lazy" before too (it loads at
 * its first request); a model on an OpenAI-compatible engine when the engine answers, probed
 * at most once per few seconds however often /ready is asked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import {
  FakeOpenAiEngine,
  postJson,
  scriptedModels,
  startService,
  tinyLlamaModel,
  type RunningService,
} from '@model-messages/testing';

interface ReadyBody {
  ready: boolean;
  models: Array<{ id: string; ready: boolean; backends: Array<{ backend: string; ready: boolean; state: string }> }>;
}

/** GET /ready as a probe sends it: no key, no version header. */
async function ready(service: RunningService): Promise<{ status: number; body: ReadyBody; text: string }> {
  const response = await fetch(`${service.baseURL}/ready`);
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as ReadyBody, text };
}

function modelOf(body: ReadyBody, id: string): ReadyBody['models'][number] {
  const model = body.models.find((candidate) => candidate.id === id);
  assert.ok(model, `${id} in ${JSON.stringify(body)}`);
  return model;
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

const llamaModel = (id: string, model: string, load: 'eager' | 'lazy') => ({
  id,
  tier: 'mid' as const,
  generation: 'newer' as const,
  contextWindow: 1024,
  maxOutputTokens: 256,
  load,
  // The tiny model's template is ChatML, which "auto" finds by rendering test conversations
  // through it for each candidate wrapper (a second or more of CPU at every load): named here.
  backend: { type: 'llama-cpp' as const, model, threads: 1, chatWrapper: 'chatML' as const },
});

test('scripted models: /ready answers 200 without a key, every model and backend ready', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const { status, body } = await ready(service);
  assert.equal(status, 200);
  assert.equal(body.ready, true);
  assert.deepEqual(
    body.models.map((model) => model.id),
    scriptedModels().map((model) => model.id),
  );
  for (const model of body.models)
    assert.deepEqual(model, {
      id: model.id,
      ready: true,
      backends: [{ backend: 'scripted', ready: true, state: 'ready' }],
    });
  const head = await fetch(`${service.baseURL}/ready`, { method: 'HEAD' });
  assert.equal(head.status, 200);
});

test('an OpenAI-compatible engine that cannot be reached: 503 naming its model, without its address', async (t) => {
  const port = await closedPort();
  const service = await startService({
    models: [
      ...scriptedModels().slice(0, 1),
      {
        id: 'engine-model',
        tier: 'mid',
        generation: 'newer',
        contextWindow: 8192,
        maxOutputTokens: 1024,
        backend: { type: 'openai-compatible', engine: 'vllm', baseURL: `http://127.0.0.1:${port}/v1`, model: 'm' },
      },
    ],
  });
  t.after(() => service.close());
  const { status, body, text } = await ready(service);
  assert.equal(status, 503);
  assert.equal(body.ready, false);
  assert.deepEqual(modelOf(body, 'engine-model'), {
    id: 'engine-model',
    ready: false,
    backends: [{ backend: 'openai-compatible:vllm', ready: false, state: 'unreachable' }],
  });
  assert.equal(modelOf(body, 'small-older').ready, true);
  assert.doesNotMatch(text, new RegExp(String(port)), 'no address in a reply that needs no key');
});

test('an engine still loading answers 503 until it is up; the probe runs at most once per 5 s however often /ready is asked', async (t) => {
  const engine = await FakeOpenAiEngine.start('vllm');
  t.after(() => engine.close());
  engine.pathReplies.set('/v1/models', { status: 503, body: { error: 'Loading model' } });
  let clock = 1_000_000;
  const service = await startService(
    {
      models: [
        {
          id: 'engine-model',
          tier: 'mid',
          generation: 'newer',
          contextWindow: 8192,
          maxOutputTokens: 1024,
          backend: { type: 'openai-compatible', engine: 'vllm', baseURL: engine.baseURL, model: engine.model },
        },
      ],
    },
    process.cwd(),
    { registry: { now: () => clock } },
  );
  t.after(() => service.close());
  const probes = () => engine.requests.filter((request) => request.path === '/v1/models').length;

  const [first, second] = await Promise.all([ready(service), ready(service)]);
  assert.equal(first.status, 503);
  assert.deepEqual(first.body.models[0]!.backends, [
    { backend: 'openai-compatible:vllm', ready: false, state: 'answered 503' },
  ]);
  assert.equal(second.status, 503);
  assert.equal((await ready(service)).status, 503);
  assert.equal(probes(), 1, 'three calls, one probe');

  engine.pathReplies.delete('/v1/models');
  clock += 4_999;
  assert.equal((await ready(service)).status, 503, 'the answer stands for 5 s');
  clock += 1;
  const up = await ready(service);
  assert.equal(up.status, 200);
  assert.deepEqual(up.body.models[0]!.backends, [
    { backend: 'openai-compatible:vllm', ready: true, state: 'reachable' },
  ]);
  assert.equal(probes(), 2);
});

test('llama-cpp: an eager model is not ready until it is loaded; a lazy one counts as ready and loads at its first request', async (t) => {
  const path = await tinyLlamaModel();
  const service = await startService({
    models: [llamaModel('eager', path, 'eager'), llamaModel('lazy', path, 'lazy')],
  });
  t.after(() => service.close());

  // startService, unlike mms serve, loads nothing at start: the eager model waits for load().
  const before = await ready(service);
  assert.equal(before.status, 503);
  assert.deepEqual(modelOf(before.body, 'eager').backends, [
    { backend: 'llama-cpp', ready: false, state: 'not loaded' },
  ]);
  assert.deepEqual(modelOf(before.body, 'lazy').backends, [
    { backend: 'llama-cpp', ready: true, state: 'not loaded: loads at its first request' },
  ]);

  const loading = service.registry.load();
  const during = await ready(service);
  assert.equal(during.status, 503);
  assert.equal(modelOf(during.body, 'eager').backends[0]!.state, 'loading');
  await loading;
  const after = await ready(service);
  assert.equal(after.status, 200, after.text);
  assert.deepEqual(modelOf(after.body, 'eager').backends, [{ backend: 'llama-cpp', ready: true, state: 'loaded' }]);
  assert.equal(modelOf(after.body, 'lazy').backends[0]!.state, 'not loaded: loads at its first request');

  const reply = await postJson(service, '/v1/messages', {
    model: 'lazy',
    max_tokens: 4,
    messages: [{ role: 'user', content: 'Hello' }],
  });
  assert.equal(reply.status, 200, await reply.clone().text());
  assert.deepEqual(modelOf((await ready(service)).body, 'lazy').backends, [
    { backend: 'llama-cpp', ready: true, state: 'loaded' },
  ]);
});
