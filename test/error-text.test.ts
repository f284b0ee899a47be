/**
 * What an engine or an upstream says reaches mms's callers only as far as it is theirs to know
 * (issue 16, case 8): a refused key relays none of the upstream's text, no reply shows a
 * configured secret or a backend's address, and relayed text is cut short.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import {
  answerCount,
  errorEnvelope,
  FakeOpenAiEngine,
  modelsWithBackend,
  postJson,
  rawUpstream,
  readSse,
  startService,
  TEST_API_KEY,
  type RawUpstream,
  type RunningService,
} from '@model-messages/testing';

const UPSTREAM_KEY = 'upstream-secret-key-0123456789';
const ENGINE_KEY = 'engine-secret-key-0123456789';
const ENGINE_ENV_KEY = 'engine-env-secret-0123456789';
const SIGNING_KEY = 'signing-secret-0123456789abcdefghijklmn';
const hello = { model: 'mid', max_tokens: 20, messages: [{ role: 'user', content: 'Hello.' }] };

interface ErrorBody {
  error: { type: string; message: string };
}

describe('a messages-upstream backend', () => {
  let raw: RawUpstream;
  let relay: RunningService;
  let answer: (response: ServerResponse) => void;
  let host: string;

  before(async () => {
    raw = await rawUpstream((request, response) => answerCount(request, response) || answer(response));
    host = new URL(raw.baseURL).host;
    relay = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: raw.baseURL, apiKey: UPSTREAM_KEY }),
    });
  });
  after(async () => {
    await relay.close();
    await raw.close();
  });

  test("an upstream 401 that echoes the key is a 500 with none of the upstream's text, key or address", async () => {
    const echoed = `invalid x-api-key ${UPSTREAM_KEY} sent to ${raw.baseURL}`;
    answer = (response) =>
      response
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify(errorEnvelope('authentication_error', echoed)));
    const response = await postJson(relay, '/v1/messages', hello);
    const text = await response.text();
    assert.equal(response.status, 500);
    assert.equal((JSON.parse(text) as ErrorBody).error.type, 'api_error');
    assert.match(text, /messages-upstream backend of model mid-newer was refused by its upstream/);
    for (const leaked of [UPSTREAM_KEY, host, 'invalid x-api-key']) assert.ok(!text.includes(leaked), leaked);
    // A configuration to fix: clients that retry 500s are told not to (issue 32).
    assert.equal(response.headers.get('x-should-retry'), 'false');
  });

  test('a 403 permission_error relays nothing either', async () => {
    answer = (response) =>
      response
        .writeHead(403, { 'content-type': 'application/json' })
        .end(JSON.stringify(errorEnvelope('permission_error', 'key upstream-secret-key may not use this model')));
    const text = await (await postJson(relay, '/v1/messages', hello)).text();
    assert.ok(!text.includes('may not use'), text);
  });

  test("an upstream's other errors are relayed cut to 300 characters, with the key taken out", async () => {
    answer = (response) =>
      response
        .writeHead(400, { 'content-type': 'application/json' })
        .end(
          JSON.stringify(
            errorEnvelope('invalid_request_error', `bad request from ${UPSTREAM_KEY}: ${'x'.repeat(2_000)}`),
          ),
        );
    const response = await postJson(relay, '/v1/messages', hello);
    const { error } = (await response.json()) as ErrorBody;
    assert.equal(response.status, 400);
    assert.ok(error.message.startsWith('bad request from [redacted]: xxx'), error.message);
    assert.ok(error.message.length < 400, `${error.message.length} characters`);
  });

  test("a refused connection names the backend by its model, not the upstream's address", async () => {
    const down = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: 'http://127.0.0.1:9' }),
    });
    try {
      const text = await (await postJson(down, '/v1/messages', hello)).text();
      assert.match(text, /the messages-upstream backend of model mid-newer failed/);
      assert.ok(!text.includes('127.0.0.1:9'), text);
    } finally {
      await down.close();
    }
  });
});

describe('an openai-compatible engine', () => {
  let engine: FakeOpenAiEngine;
  let service: RunningService;

  before(async () => {
    engine = await FakeOpenAiEngine.start('vllm');
    process.env.MMS_TEST_ENGINE_KEY = ENGINE_ENV_KEY;
    const model = (id: string, backend: Record<string, unknown>) =>
      engine.modelConfig(id, backend, { maxOutputTokens: 1024 });
    service = await startService({
      signingKey: SIGNING_KEY,
      models: [model('keyed', { apiKey: ENGINE_KEY }), model('from-env', { apiKeyEnv: 'MMS_TEST_ENGINE_KEY' })],
      serverTools: { webSearch: { provider: { type: 'brave', apiKey: 'brave-secret-0123456789' } } },
    });
  });
  after(async () => {
    await service.close();
    await engine.close();
    delete process.env.MMS_TEST_ENGINE_KEY;
  });

  test('an engine 500 whose message holds configured secrets and its address is relayed without them', async () => {
    const secrets = [ENGINE_KEY, ENGINE_ENV_KEY, TEST_API_KEY, SIGNING_KEY, 'brave-secret-0123456789'];
    for (const model of ['keyed', 'from-env']) {
      engine.reply({
        status: 500,
        body: { error: { message: `EngineCore failed at ${engine.baseURL} for ${secrets.join(' and ')}` } },
      });
      const response = await postJson(service, '/v1/messages', { ...hello, model });
      const { error } = (await response.json()) as ErrorBody;
      assert.equal(response.status, 500);
      assert.match(error.message, /^the vllm engine failed \(500\): EngineCore failed at \[backend address\]/);
      for (const secret of secrets) assert.ok(!error.message.includes(secret), `${model}: ${secret}`);
      assert.equal(error.message.split('[redacted]').length - 1, secrets.length, error.message);
    }
  });

  test('an error event mid-stream is scrubbed the same way', async () => {
    engine.reply({
      stream: [
        { choices: [{ index: 0, delta: { content: 'Half' } }] },
        { error: { message: `failed: ${ENGINE_KEY}` } },
      ],
    });
    const response = await postJson(service, '/v1/messages', { ...hello, model: 'keyed', stream: true });
    const events = await readSse(response);
    const error = events.at(-1)?.data.error as { message: string } | undefined;
    assert.equal(events.at(-1)?.event, 'error');
    assert.ok(
      error !== undefined && !error.message.includes(ENGINE_KEY) && error.message.includes('[redacted]'),
      error?.message,
    );
  });

  test("an engine 401 names the backend by its model and relays none of the engine's text", async () => {
    engine.reply({ status: 401, body: { error: { message: `Invalid key ${ENGINE_KEY}` } } });
    const text = await (await postJson(service, '/v1/messages', { ...hello, model: 'keyed' })).text();
    assert.match(text, /the vllm engine of model keyed refused mms's credentials \(401\)/);
    assert.ok(!text.includes('Invalid key'), text);
  });
});
