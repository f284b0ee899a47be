/** The HTTP edge: keys, version header, request ids, error envelopes, body limits, routes. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, startService, TEST_API_KEY, type RunningService } from '@model-messages/testing';

let service: RunningService;
before(async () => {
  service = await startService();
});
after(() => service.close());

const simpleRequest = { model: 'mid', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] };

async function expectError(response: Response, status: number, type: string, messagePattern?: RegExp) {
  assert.equal(response.status, status);
  const body = (await response.json()) as {
    type: string;
    error: { type: string; message: string };
    request_id: string;
  };
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, type);
  assert.equal(body.request_id, response.headers.get('request-id'));
  assert.match(body.request_id, /^req_/);
  if (messagePattern) assert.match(body.error.message, messagePattern);
  return body;
}

describe('authentication', () => {
  test('a request with a configured x-api-key is answered', async () => {
    const response = await postJson(service, '/v1/messages', simpleRequest);
    assert.equal(response.status, 200);
  });

  test('Authorization: Bearer is accepted in place of x-api-key', async () => {
    const response = await postJson(service, '/v1/messages', simpleRequest, {
      'x-api-key': undefined,
      authorization: `Bearer ${TEST_API_KEY}`,
    });
    assert.equal(response.status, 200);
  });

  test('a missing key is 401 authentication_error', async () => {
    await expectError(
      await postJson(service, '/v1/messages', simpleRequest, { 'x-api-key': undefined }),
      401,
      'authentication_error',
      /x-api-key/,
    );
  });

  test('a wrong key is 401 and the reply does not echo it', async () => {
    const body = await expectError(
      await postJson(service, '/v1/messages', simpleRequest, { 'x-api-key': 'wrong-key-secret-42' }),
      401,
      'authentication_error',
    );
    assert.doesNotMatch(JSON.stringify(body), /wrong-key-secret-42/);
  });

  test('a key that is a prefix of a configured key is refused', async () => {
    await expectError(
      await postJson(service, '/v1/messages', simpleRequest, { 'x-api-key': TEST_API_KEY.slice(0, -1) }),
      401,
      'authentication_error',
    );
  });

  test('/health needs no key', async () => {
    const response = await fetch(`${service.baseURL}/health`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'ok' });
    assert.match(response.headers.get('request-id') ?? '', /^req_/);
  });

  test('/health with a query needs no key either', async () => {
    const response = await fetch(`${service.baseURL}/health?probe=1`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'ok' });
  });

  test('only the health route is exempt: /health/ and /healthz are unknown paths, which need a key first', async () => {
    for (const path of ['/health/', '/healthz', '/health/?probe=1']) {
      await expectError(await fetch(`${service.baseURL}${path}`), 401, 'authentication_error');
      await expectError(
        await fetch(`${service.baseURL}${path}`, { headers: { 'x-api-key': TEST_API_KEY } }),
        404,
        'not_found_error',
      );
    }
  });
});

describe('version header', () => {
  test('a missing anthropic-version is 400 with a message that names the header and the supported values', async () => {
    await expectError(
      await postJson(service, '/v1/messages', simpleRequest, { 'anthropic-version': undefined }),
      400,
      'invalid_request_error',
      /anthropic-version.*required.*2023-06-01, 2026-10-21/,
    );
  });

  test('another version value is 400 naming the supported ones', async () => {
    await expectError(
      await postJson(service, '/v1/messages', simpleRequest, { 'anthropic-version': '2024-01-01' }),
      400,
      'invalid_request_error',
      /"2024-01-01" is not a supported version; the supported versions are 2023-06-01, 2026-10-21$/,
    );
  });

  test('2026-10-21 is answered as 2023-06-01 is (docs/decisions/0004)', async () => {
    const replies = [];
    for (const version of ['2023-06-01', '2026-10-21']) {
      const response = await postJson(service, '/v1/messages', simpleRequest, { 'anthropic-version': version });
      assert.equal(response.status, 200);
      const { id, ...rest } = (await response.json()) as Record<string, unknown>;
      assert.match(String(id), /^msg_/);
      replies.push(rest);
    }
    assert.deepEqual(replies[1], replies[0]);
  });
});

describe('envelopes and routes', () => {
  test('every response carries a fresh request-id header', async () => {
    const first = await postJson(service, '/v1/messages', simpleRequest);
    const second = await postJson(service, '/v1/messages', simpleRequest);
    assert.match(first.headers.get('request-id') ?? '', /^req_/);
    assert.notEqual(first.headers.get('request-id'), second.headers.get('request-id'));
  });

  test('an incoming request-id header is not echoed', async () => {
    const response = await postJson(service, '/v1/messages', simpleRequest, { 'request-id': 'req_spoofed' });
    assert.notEqual(response.headers.get('request-id'), 'req_spoofed');
  });

  test('an unknown route is 404 not_found_error', async () => {
    await expectError(await postJson(service, '/v1/nothing', {}), 404, 'not_found_error', /POST \/v1\/nothing/);
  });

  test('an unknown model is 404 not_found_error naming it', async () => {
    await expectError(
      await postJson(service, '/v1/messages', { ...simpleRequest, model: 'no-such-model' }),
      404,
      'not_found_error',
      /no-such-model/,
    );
  });

  test('malformed JSON is 400, not a crash', async () => {
    await expectError(await postJson(service, '/v1/messages', '{"model": "mid", '), 400, 'invalid_request_error');
  });

  test('a body that is not an object is 400', async () => {
    await expectError(await postJson(service, '/v1/messages', '[1, 2]'), 400, 'invalid_request_error', /JSON object/);
  });

  test('absurdly nested JSON is 400, not a stack overflow', async () => {
    const depth = 100_000;
    const nested = `{"model":"mid","max_tokens":5,"messages":[{"role":"user","content":"x"}],"metadata":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    await expectError(await postJson(service, '/v1/messages', nested), 400, 'invalid_request_error', /nests deeper/);
    assert.equal((await postJson(service, '/v1/messages', simpleRequest)).status, 200);
  });

  test('__proto__ keys are refused, not merged', async () => {
    await expectError(
      await postJson(service, '/v1/messages', '{"__proto__": {"admin": true}, "model": "mid"}'),
      400,
      'invalid_request_error',
    );
  });

  test('a body over 32 MB is 413 request_too_large', async () => {
    const big = JSON.stringify({
      ...simpleRequest,
      messages: [{ role: 'user', content: 'x'.repeat(33 * 1024 * 1024) }],
    });
    await expectError(await postJson(service, '/v1/messages', big), 413, 'request_too_large');
  });

  test('a non-JSON content-type is 400 that says what is expected', async () => {
    await expectError(
      await postJson(service, '/v1/messages', 'hello', { 'content-type': 'text/plain' }),
      400,
      'invalid_request_error',
      /application\/json/,
    );
  });
});

describe('models endpoints', () => {
  test('GET /v1/models lists every configured model', async () => {
    const response = await fetch(`${service.baseURL}/v1/models`, { headers: service.headers });
    const page = (await response.json()) as {
      data: Array<{ id: string; type: string }>;
      has_more: boolean;
      first_id: string;
    };
    assert.deepEqual(
      page.data.map((model) => model.id),
      ['small-older', 'small-newer', 'mid-older', 'mid-newer', 'large-older', 'large-newer'],
    );
    assert.equal(page.has_more, false);
    assert.equal(page.data[0]?.type, 'model');
  });

  test('GET /v1/models pages with limit and after_id', async () => {
    const response = await fetch(`${service.baseURL}/v1/models?limit=2&after_id=small-newer`, {
      headers: service.headers,
    });
    const page = (await response.json()) as { data: Array<{ id: string }>; has_more: boolean; last_id: string };
    assert.deepEqual(
      page.data.map((model) => model.id),
      ['mid-older', 'mid-newer'],
    );
    assert.equal(page.has_more, true);
    assert.equal(page.last_id, 'mid-newer');
  });

  test('GET /v1/models/{alias} resolves to the model', async () => {
    const response = await fetch(`${service.baseURL}/v1/models/large`, { headers: service.headers });
    assert.equal(((await response.json()) as { id: string }).id, 'large-newer');
  });

  test('GET /v1/models/{unknown} is 404', async () => {
    await expectError(
      await fetch(`${service.baseURL}/v1/models/nope`, { headers: service.headers }),
      404,
      'not_found_error',
    );
  });

  test('the models endpoints need a key too', async () => {
    await expectError(await fetch(`${service.baseURL}/v1/models`), 401, 'authentication_error');
  });
});
