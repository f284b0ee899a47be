/**
 * `models[].backends: [...]`: the fallback list over HTTP. A retryable failure before the first
 * output (500, 529, 429, connection refused) moves the request to the next backend and the
 * `mms-backend` header names the one that answered (a stream, which opens at admission before
 * one is chosen, names the list in its header and the one that answered in its trailer); a
 * failure after output is the reply's error; a 400 is never retried; circuits open after
 * `failureThreshold` failures and probe again after `cooldownMs`, on a clock the test steps (no
 * sleeping).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp, ConfigError, ModelRegistry, validateConfig, type ServiceConfigInput } from '@model-messages/server';
import {
  answerCount,
  closedPortURL,
  errorEnvelope,
  postJson,
  postStreamWithTrailers,
  rawUpstream,
  readSse,
  sseFrames,
  startService,
  streamOf,
  TEST_API_KEY,
  type RawUpstream,
  type RunningService,
} from '@model-messages/testing';
import { API_VERSION, VERSION_HEADER } from '@model-messages/protocol';

interface ErrorBody {
  error: { type: string; message: string };
}

interface Reply {
  content: Array<{ type: string; text?: string; name?: string }>;
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

function fallbackModel(backends: unknown[], fallback?: Record<string, unknown>): ServiceConfigInput['models'] {
  return [{ ...base, backends, ...(fallback ? { fallback } : {}) } as never];
}

/** startService with the circuit breakers on a clock the test controls. */
async function startWithClock(models: ServiceConfigInput['models'], clock: { now: number }): Promise<RunningService> {
  const config = validateConfig({ apiKeys: [TEST_API_KEY], models }, 'test config');
  const registry = ModelRegistry.fromConfig(config.models, process.cwd(), { now: () => clock.now });
  const app = buildApp({ config, registry });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    baseURL: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    apiKey: TEST_API_KEY,
    registry,
    signer: app.signer,
    headers: { 'x-api-key': TEST_API_KEY, [VERSION_HEADER]: API_VERSION, 'content-type': 'application/json' },
    close: () => app.close(),
  };
}

describe('scripted primary with faults, scripted fallback without', () => {
  let service: RunningService;
  before(async () => {
    // A threshold no test here reaches: the circuit has its own tests below.
    service = await startService({
      models: fallbackModel([{ type: 'scripted', faults: true }, { type: 'scripted' }], { failureThreshold: 1000 }),
    });
  });
  after(() => service.close());

  test('with no failure the primary answers and the header names it', async () => {
    const response = await postJson(service, '/v1/messages', hello);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('mms-backend'), 'scripted#1');
  });

  for (const fault of ['http-500', 'http-529', 'http-429']) {
    test(`${fault} from the primary: the fallback answers, JSON and stream alike`, async () => {
      const response = await postJson(service, '/v1/messages', hello, { 'mms-fault': fault });
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(response.headers.get('mms-backend'), 'scripted#2');
      assert.equal(((await response.json()) as Reply).content[0]?.text, 'Hello, whoever answers.');
      // The stream opened before the primary failed: the fallback still takes over, since no
      // content had gone out; the header names the list, the trailer the one that answered.
      const streamed = await postStreamWithTrailers(service, hello, { 'mms-fault': fault });
      assert.equal(streamed.status, 200);
      assert.equal(streamed.headers['mms-backend'], 'scripted#1,scripted#2');
      assert.equal(streamed.headers.trailer, 'mms-backend');
      assert.equal(streamed.trailers['mms-backend'], 'scripted#2');
      const names = streamed.events.map((event) => event.event);
      assert.deepEqual(names.slice(0, 3), ['message_start', 'ping', 'content_block_start']);
      assert.equal(names.filter((name) => name === 'message_start').length, 1);
      assert.ok(!names.includes('error'));
      assert.equal(names.at(-1), 'message_stop');
      const text = streamed.events
        .filter((event) => event.event === 'content_block_delta')
        .map((event) => (event.data.delta as { text: string }).text)
        .join('');
      assert.equal(text, 'Hello, whoever answers.');
    });
  }

  test('a stream whose every backend fails before output ends in the last failure as an error event', async () => {
    const service = await startService({
      models: fallbackModel([
        { type: 'scripted', faults: true },
        { type: 'scripted', faults: true },
      ]),
    });
    try {
      const streamed = await postStreamWithTrailers(service, hello, { 'mms-fault': 'http-529' });
      assert.equal(streamed.status, 200);
      assert.deepEqual(
        streamed.events.map((event) => event.event),
        ['message_start', 'ping', 'error'],
      );
      assert.deepEqual(streamed.events.at(-1)?.data.error, {
        type: 'overloaded_error',
        message: 'Injected fault: http-529',
      });
      // No backend answered: the trailer names the list, as the header did.
      assert.equal(streamed.trailers['mms-backend'], 'scripted#1,scripted#2');
    } finally {
      await service.close();
    }
  });

  test('a failure after the first output is not retried: the stream ends in an error event from the primary', async () => {
    const response = await postStreamWithTrailers(service, hello, { 'mms-fault': 'stream-error' });
    assert.equal(response.status, 200);
    assert.equal(response.trailers['mms-backend'], 'scripted#1');
    const events = response.events;
    const names = events.map((event) => event.event).filter((name) => name !== 'ping');
    assert.deepEqual(names, ['message_start', 'content_block_start', 'content_block_delta', 'error']);
    assert.deepEqual(events.at(-1)?.data.error, { type: 'api_error', message: 'Injected fault: stream-error' });
  });

  test('a 400 is the request, not the backend: it is not retried on the fallback', async () => {
    // Only the primary reads mms-fault; the fallback would answer this request with a 200.
    const response = await postJson(service, '/v1/messages', hello, { 'mms-fault': 'no-such-fault' });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as ErrorBody).error.message, /unknown fault "no-such-fault"/);
  });
});

describe('an upstream primary that cannot be reached', () => {
  test('connection refused: the fallback answers', async () => {
    const service = await startService({
      models: fallbackModel([{ type: 'messages-upstream', baseURL: await closedPortURL() }, { type: 'scripted' }]),
    });
    try {
      const response = await postJson(service, '/v1/messages', hello);
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(response.headers.get('mms-backend'), 'scripted');
    } finally {
      await service.close();
    }
  });

  test('every backend refusing: the last failure is the reply', async () => {
    const service = await startService({
      models: fallbackModel([
        { type: 'messages-upstream', baseURL: await closedPortURL() },
        { type: 'messages-upstream', baseURL: await closedPortURL() },
      ]),
    });
    try {
      const response = await postJson(service, '/v1/messages', hello);
      assert.equal(response.status, 500);
      assert.match(((await response.json()) as ErrorBody).error.message, /ECONNREFUSED/);
    } finally {
      await service.close();
    }
  });
});

describe('circuit breaker', () => {
  let primary: RawUpstream;
  /** How the primary answers /v1/messages right now. */
  let primaryAnswer: (response: ServerResponse) => void;
  const failing = (response: ServerResponse) =>
    void response
      .writeHead(500, { 'content-type': 'application/json' })
      .end(JSON.stringify(errorEnvelope('api_error', 'primary down')));
  const healthy = (response: ServerResponse) =>
    void response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames(streamOf('from the primary')));

  before(async () => {
    primary = await rawUpstream((request, response) => answerCount(request, response) || primaryAnswer(response));
  });
  after(() => primary.close());

  const primaryCalls = () => primary.requests.filter((entry) => entry.path === '/v1/messages').length;

  test('opens after failureThreshold failures, skips the primary, probes after the cool-down, closes on success', async () => {
    const clock = { now: 0 };
    primaryAnswer = failing;
    const service = await startWithClock(
      fallbackModel([{ type: 'messages-upstream', baseURL: primary.baseURL }, { type: 'scripted' }], {
        failureThreshold: 2,
        cooldownMs: 60_000,
      }),
      clock,
    );
    const answeredBy = async () => {
      const response = await postJson(service, '/v1/messages', hello);
      assert.equal(response.status, 200, await response.clone().text());
      return response.headers.get('mms-backend');
    };
    try {
      const before = primaryCalls();
      assert.equal(await answeredBy(), 'scripted');
      assert.equal(await answeredBy(), 'scripted');
      assert.equal(primaryCalls() - before, 2, 'both failures reached the primary');
      // Open: the primary is not asked at all, neither to count nor to answer.
      const requestsWhenOpened = primary.requests.length;
      assert.equal(await answeredBy(), 'scripted');
      assert.equal(await answeredBy(), 'scripted');
      assert.equal(primary.requests.length, requestsWhenOpened);
      // Cool-down over: one probe, which fails and opens the circuit again.
      clock.now += 60_000;
      assert.equal(await answeredBy(), 'scripted');
      assert.equal(primaryCalls() - before, 3);
      assert.equal(await answeredBy(), 'scripted');
      assert.equal(primaryCalls() - before, 3);
      // The primary recovers: the next probe succeeds and closes the circuit.
      primaryAnswer = healthy;
      clock.now += 59_999;
      assert.equal(await answeredBy(), 'scripted');
      clock.now += 1;
      assert.equal(await answeredBy(), 'messages-upstream');
      assert.equal(await answeredBy(), 'messages-upstream');
    } finally {
      await service.close();
    }
  });

  test("a count that fails moves the request on without a verdict: counted and answered by the next backend, the primary's circuit still closed", async () => {
    let counting = false;
    const upstream = await rawUpstream((request, response) => {
      if (request.url === '/v1/messages/count_tokens' && !counting)
        return void response
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify(errorEnvelope('api_error', 'no counting today')));
      if (answerCount(request, response)) return;
      healthy(response);
    });
    const service = await startService({
      models: fallbackModel([{ type: 'messages-upstream', baseURL: upstream.baseURL }, { type: 'scripted' }], {
        failureThreshold: 1,
        cooldownMs: 3_600_000,
      }),
    });
    const generations = () => upstream.requests.filter((entry) => entry.path === '/v1/messages').length;
    try {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const response = await postJson(service, '/v1/messages', hello);
        assert.equal(response.status, 200, await response.clone().text());
        assert.equal(response.headers.get('mms-backend'), 'scripted');
      }
      assert.equal(generations(), 0, 'a backend whose count failed is not asked to generate that request');
      // A threshold of 1 would have opened the circuit on one charged failure: it is still closed.
      counting = true;
      const response = await postJson(service, '/v1/messages', hello);
      assert.equal(response.headers.get('mms-backend'), 'messages-upstream');
    } finally {
      await service.close();
      await upstream.close();
    }
  });

  for (const [what, body] of [
    ['a bare page', '<html><body><h1>502 Bad Gateway</h1></body></html>'],
    ['an api_error envelope with no mms-error-code', JSON.stringify(errorEnvelope('api_error', 'Bad Gateway'))],
  ] as const) {
    test(`a proxy's 502 Bad Gateway (${what}) is the upstream failing: the fallback answers, and the failure is charged`, async () => {
      const proxy = await rawUpstream((request, response) => {
        if (answerCount(request, response)) return;
        response
          .writeHead(502, { 'content-type': what === 'a bare page' ? 'text/html' : 'application/json' })
          .end(body);
      });
      const service = await startService({
        models: fallbackModel([{ type: 'messages-upstream', baseURL: proxy.baseURL }, { type: 'scripted' }], {
          failureThreshold: 1,
          cooldownMs: 3_600_000,
        }),
      });
      const generations = () => proxy.requests.filter((entry) => entry.path === '/v1/messages').length;
      try {
        const first = await postJson(service, '/v1/messages', hello);
        assert.equal(first.status, 200, await first.clone().text());
        assert.equal(first.headers.get('mms-backend'), 'scripted');
        assert.equal(generations(), 1);
        // Charged: a threshold of 1 opened the circuit, so the next request does not ask the proxy.
        assert.equal((await postJson(service, '/v1/messages', hello)).headers.get('mms-backend'), 'scripted');
        assert.equal(generations(), 1);
      } finally {
        await service.close();
        await proxy.close();
      }
    });
  }

  test('with every circuit open the answer is an immediate 529 with retry-after', async () => {
    const clock = { now: 0 };
    primaryAnswer = failing;
    const service = await startWithClock(
      fallbackModel(
        [
          { type: 'messages-upstream', baseURL: primary.baseURL },
          { type: 'messages-upstream', baseURL: await closedPortURL() },
        ],
        { failureThreshold: 1, cooldownMs: 30_000 },
      ),
      clock,
    );
    try {
      const first = await postJson(service, '/v1/messages', hello);
      assert.equal(first.status, 500);
      const calls = primary.requests.length;
      clock.now += 10_000;
      const second = await postJson(service, '/v1/messages', hello);
      assert.equal(second.status, 529);
      assert.equal(second.headers.get('retry-after'), '20');
      assert.match(
        ((await second.json()) as ErrorBody).error.message,
        /every backend of this model .* failed recently/,
      );
      assert.equal(primary.requests.length, calls);
    } finally {
      await service.close();
    }
  });

  test('a turn stays on the backend that answered its first step: a later step failing is an error event, not the fallback', async () => {
    let calls = 0;
    primaryAnswer = (response) => {
      calls += 1;
      if (calls > 1) return failing(response);
      const searchCall = [
        {
          type: 'message_start',
          message: {
            id: 'msg_up',
            type: 'message',
            role: 'assistant',
            model: 'up',
            content: [],
            usage: { input_tokens: 3, output_tokens: 0 },
          },
        },
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 'toolu_1', name: 'web_search', input: {} },
        },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 4 } },
        { type: 'message_stop' },
      ];
      response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames(searchCall));
    };
    const service = await startService({
      models: fallbackModel([{ type: 'messages-upstream', baseURL: primary.baseURL }, { type: 'scripted' }]),
    });
    try {
      const tools = [{ type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'] }];
      const response = await postStreamWithTrailers(service, { ...hello, tools });
      assert.equal(response.trailers['mms-backend'], 'messages-upstream');
      const events = response.events;
      const starts = events
        .filter((event) => event.event === 'content_block_start')
        .map((event) => (event.data.content_block as { type: string }).type);
      assert.deepEqual(starts, ['server_tool_use', 'web_search_tool_result']);
      assert.deepEqual(events.at(-1)?.data.error, { type: 'api_error', message: 'primary down' });
      assert.equal(calls, 2);
    } finally {
      await service.close();
    }
  });
});

describe('headers and config', () => {
  test('a single backend is named too, in JSON and stream replies', async () => {
    const service = await startService();
    try {
      assert.equal((await postJson(service, '/v1/messages', hello)).headers.get('mms-backend'), 'scripted');
      const streamed = await postJson(service, '/v1/messages', { ...hello, stream: true });
      assert.equal(streamed.headers.get('mms-backend'), 'scripted');
      await streamed.text();
    } finally {
      await service.close();
    }
  });

  test("the primary's concurrency and queue bound the whole list: a request served by the fallback still holds the list's one slot; a fallback's own values are refused by field", async () => {
    const service = await startService({
      models: fallbackModel([
        { type: 'scripted', faults: true, concurrency: 1, queue: 0 },
        // Slow enough that the first request holds its slot until the test lets it go.
        { type: 'scripted', tokenDelayMs: 60_000 },
      ]),
    });
    try {
      // Failed over: the fallback streams it, slowly. The stream opened at admission, before
      // the backend was chosen, so its header names the list.
      const first = await postJson(service, '/v1/messages', { ...hello, stream: true }, { 'mms-fault': 'http-500' });
      assert.equal(first.headers.get('mms-backend'), 'scripted#1,scripted#2');
      const reader = first.body!.getReader();
      await reader.read();
      // The list has one slot and no queue, and the fallback's request holds it: refused at once,
      // though the primary itself is idle (per-member admission would let this in).
      const second = await postJson(service, '/v1/messages', hello);
      assert.equal(second.status, 529);
      assert.equal(((await second.json()) as ErrorBody).error.type, 'overloaded_error');
      await reader.cancel();
    } finally {
      await service.close();
    }
    const refusal = (fallback: Record<string, unknown>) => {
      try {
        validateConfig(
          { models: fallbackModel([{ type: 'scripted', concurrency: 1, queue: 0 }, fallback]) },
          'test.json',
        );
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.message;
      }
      return 'valid';
    };
    assert.match(
      refusal({ type: 'scripted', concurrency: 4 }),
      /models\.0\.backends\.1\.concurrency: a fallback is admitted with its list/,
    );
    assert.match(
      refusal({ type: 'messages-upstream', baseURL: 'http://10.0.0.7:8080', queue: 8 }),
      /models\.0\.backends\.1\.queue: a fallback is admitted with its list/,
    );
  });

  test('a model gives exactly one of backend and backends; fallback only with backends', () => {
    const message = (model: Record<string, unknown>) => {
      try {
        validateConfig({ models: [{ ...base, ...model }] }, 'test.json');
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.message;
      }
      return 'valid';
    };
    assert.match(message({}), /models\.0\.backends: give exactly one of backend/);
    assert.match(
      message({ backend: { type: 'scripted' }, backends: [{ type: 'scripted' }] }),
      /models\.0\.backends: give exactly one of backend/,
    );
    assert.match(message({ backends: [] }), /models\.0\.backends/);
    assert.match(
      message({ backend: { type: 'scripted' }, fallback: {} }),
      /models\.0\.fallback: applies only to a model with backends/,
    );
    assert.match(
      message({ backends: [{ type: 'scripted' }], fallback: { failureThreshold: 0 } }),
      /models\.0\.fallback\.failureThreshold/,
    );
    assert.equal(
      message({ backends: [{ type: 'scripted' }, { type: 'messages-upstream', baseURL: 'http://10.0.0.7:8080' }] }),
      'valid',
    );
    assert.match(
      message({ backend: { type: 'messages-upstream', baseURL: 'ftp://x' } }),
      /models\.0\.backend\.baseURL/,
    );
    // A fallback's own admission would be ignored: it is refused instead, by its field.
    assert.match(
      message({ backends: [{ type: 'scripted' }, { type: 'scripted', concurrency: 64 }] }),
      /models\.0\.backends\.1\.concurrency: a fallback is admitted with its list/,
    );
  });
});
