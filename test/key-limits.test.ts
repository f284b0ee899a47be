/**
 * Keys with an identity (issue 20), end to end through the official client: two keys with
 * different models and limits; a model outside a key's list is a 403 that names no other key or
 * model; a 429 with retry-after and the anthropic-ratelimit-* headers, which the client honours
 * and then succeeds; successes carry the headers too; a stream cut short pays the output it
 * produced; GET /v1/usage for an admin key only; the key id in the access log and the metrics.
 * Limits in memory here; test/key-limits-redis.test.ts runs them on Redis across replicas.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { scriptedModels, startService, TEST_API_KEY, type RunningService } from '@model-messages/testing';

const KEYS = {
  teamA: 'mms-team-a-key-0123456789abcdef',
  teamB: 'mms-team-b-key-0123456789abcdef',
  burst: 'mms-burst-key-0123456789abcdef',
  slow: 'mms-slow-key-0123456789abcdef',
  ops: 'mms-ops-key-0123456789abcdef',
};

function hash(key: string): string {
  return `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

const RFC3339_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const logLines: Array<Record<string, unknown>> = [];
let service: RunningService;

before(async () => {
  service = await startService(
    {
      models: [
        ...scriptedModels(),
        {
          id: 'slow',
          tier: 'mid',
          generation: 'newer',
          contextWindow: 4096,
          maxOutputTokens: 512,
          backend: { type: 'scripted', tokenDelayMs: 40 },
        },
      ],
      keys: [
        {
          id: 'team-a',
          hash: hash(KEYS.teamA),
          models: ['mid', 'small-*'],
          limits: { requestsPerMinute: 1000, inputTokensPerMinute: 200, outputTokensPerMinute: 100000 },
        },
        {
          id: 'team-b',
          hash: hash(KEYS.teamB),
          models: ['large-newer'],
          limits: { inputTokensPerMinute: 50000 },
        },
        { id: 'burst', hash: hash(KEYS.burst), limits: { requestsPerMinute: 30 } },
        { id: 'slow', hash: hash(KEYS.slow), models: ['slow'], limits: { concurrent: 1, outputTokensPerMinute: 10 } },
        { id: 'ops', hash: hash(KEYS.ops), admin: true },
      ],
    },
    process.cwd(),
    {
      log: {
        level: 'info',
        destination: {
          write(text: string) {
            for (const line of text.split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
          },
        },
      },
    },
  );
});
after(() => service.close());

function client(apiKey: string, maxRetries = 0, fetchOverride?: typeof fetch): Anthropic {
  return new Anthropic({ baseURL: service.baseURL, apiKey, maxRetries, fetch: fetchOverride });
}

function ask(apiKey: string, model: string, text = 'hello there', maxRetries = 0, fetchOverride?: typeof fetch) {
  return client(apiKey, maxRetries, fetchOverride).messages.create({
    model,
    max_tokens: 64,
    messages: [{ role: 'user', content: text }],
  });
}

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => assert.fail(`expected a failure, got ${JSON.stringify(value).slice(0, 200)}`),
    (error: unknown) => error,
  );
}

describe('two keys with different models and limits', () => {
  test('each key uses its own models, and its replies carry its own limits', async () => {
    const a = await client(KEYS.teamA)
      .messages.create({ model: 'mid', max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }] })
      .withResponse();
    assert.equal(a.data.model, 'mid-newer');
    assert.equal(a.response.headers.get('anthropic-ratelimit-requests-limit'), '1000');
    assert.equal(a.response.headers.get('anthropic-ratelimit-input-tokens-limit'), '200');
    const inputRemaining = Number(a.response.headers.get('anthropic-ratelimit-input-tokens-remaining'));
    assert.ok(inputRemaining <= 200 - a.data.usage.input_tokens, String(inputRemaining));
    assert.equal(a.response.headers.get('anthropic-ratelimit-output-tokens-limit'), '100000');
    assert.match(a.response.headers.get('anthropic-ratelimit-requests-reset') ?? '', RFC3339_SECONDS);
    // A pattern of the key's list: small-older by its id.
    assert.equal((await ask(KEYS.teamA, 'small-older')).model, 'small-older');

    const b = await client(KEYS.teamB)
      .messages.create({ model: 'large', max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }] })
      .withResponse();
    assert.equal(b.data.model, 'large-newer', 'an alias of a listed model id passes');
    assert.equal(b.response.headers.get('anthropic-ratelimit-input-tokens-limit'), '50000');
    assert.equal(b.response.headers.get('anthropic-ratelimit-requests-limit'), null, 'only the limits the key has');

    const plain = await client(TEST_API_KEY)
      .messages.create({ model: 'large', max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }] })
      .withResponse();
    assert.equal(plain.response.headers.get('anthropic-ratelimit-requests-limit'), null, 'a plain key has no limits');
  });

  test('a model outside the key list is a 403 permission_error that names no other key or model', async () => {
    for (const [key, model] of [
      [KEYS.teamA, 'large-newer'],
      [KEYS.teamA, 'large'],
      [KEYS.teamB, 'mid'],
      [KEYS.teamB, 'no-such-model'],
    ] as const) {
      const error = await thrown(ask(key, model));
      assert.ok(error instanceof Anthropic.PermissionDeniedError, `${model}: got ${String(error)}`);
      assert.equal(error.status, 403);
      assert.equal(error.type, 'permission_error');
      const message = (error.error as { error: { message: string } }).error.message;
      assert.equal(message, `this API key may not use the model "${model}"`);
    }
    // The count_tokens route and the model list follow the same list.
    const count = await thrown(
      client(KEYS.teamB).messages.countTokens({ model: 'mid', messages: [{ role: 'user', content: 'hi' }] }),
    );
    assert.ok(count instanceof Anthropic.PermissionDeniedError);
    const listed = await client(KEYS.teamB).models.list();
    assert.deepEqual(
      listed.data.map((model) => model.id),
      ['large-newer'],
    );
  });

  test('a prompt over the key input-token limit is refused with a 429 whose message says so, sent once', async () => {
    let sent = 0;
    const counting: typeof fetch = (input, init) => {
      sent += 1;
      return fetch(input, init);
    };
    // The official client retries a 429 twice by default; x-should-retry: false stops it (issue 32).
    const error = await thrown(ask(KEYS.teamA, 'mid', 'word '.repeat(400), 2, counting));
    assert.ok(error instanceof Anthropic.RateLimitError, String(error));
    assert.match(
      (error.error as { error: { message: string } }).error.message,
      /input tokens are more than this API key's limit of 200 input tokens per minute/,
    );
    assert.equal(error.headers.get('retry-after'), null, 'no wait makes it fit');
    assert.equal(error.headers.get('x-should-retry'), 'false');
    assert.equal(sent, 1);
  });
});

describe('past a limit', () => {
  test('429 rate_limit_error with retry-after and the headers; the client honours retry-after and succeeds', async () => {
    // 30 a minute: the bucket holds 30 requests, and refills one every 2 s.
    let refused: InstanceType<typeof Anthropic.RateLimitError> | undefined;
    for (let sent = 0; sent < 60 && refused === undefined; sent += 1) {
      const error = await ask(KEYS.burst, 'mid').then(
        () => undefined,
        (failure: unknown) => failure,
      );
      if (error !== undefined) {
        assert.ok(error instanceof Anthropic.RateLimitError, String(error));
        refused = error;
      }
    }
    assert.ok(refused, 'no 429 within 60 requests');
    assert.equal(refused.status, 429);
    assert.equal(refused.type, 'rate_limit_error');
    assert.equal(refused.headers.get('mms-error-code'), 'rate_limited');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2, `retry-after ${retryAfter}`);
    assert.equal(refused.headers.get('anthropic-ratelimit-requests-limit'), '30');
    assert.equal(refused.headers.get('anthropic-ratelimit-requests-remaining'), '0');
    assert.match(refused.headers.get('anthropic-ratelimit-requests-reset') ?? '', RFC3339_SECONDS);
    assert.ok(refused.requestID, 'the envelope has its request id');

    // The client's own retry: refused first, then it waits retry-after and succeeds.
    const statuses: number[] = [];
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    };
    const message = await ask(KEYS.burst, 'mid', 'hello there', 2, recording);
    assert.equal(message.type, 'message');
    assert.deepEqual(statuses, [429, 200]);
  });

  test('past the concurrency limit a request is refused; a stream cut short pays the output it produced', async () => {
    const controller = new AbortController();
    const stream = client(KEYS.slow).messages.stream(
      { model: 'slow', max_tokens: 200, messages: [{ role: 'user', content: 'one two three four five six seven' }] },
      { signal: controller.signal },
    );
    let deltas = 0;
    const read = (async () => {
      for await (const event of stream) {
        if (event.type === 'content_block_delta') deltas += 1;
        if (deltas === 3) controller.abort();
      }
    })().catch(() => undefined);
    // Its first output has come: it holds the key's one place in flight.
    await new Promise<void>((resolve) => stream.on('text', () => resolve()));
    const busy = await thrown(ask(KEYS.slow, 'slow'));
    assert.ok(busy instanceof Anthropic.RateLimitError, String(busy));
    assert.match((busy.error as { error: { message: string } }).error.message, /limit of 1 requests in flight/);
    assert.equal(busy.headers.get('retry-after'), '1');
    await read;
    // The cut stream's place goes back once its turn has stopped; its output tokens were charged.
    let headers: Headers | undefined;
    for (let attempt = 0; attempt < 50 && headers === undefined; attempt += 1) {
      const reply = await client(KEYS.slow)
        .messages.create({ model: 'slow', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] })
        .withResponse()
        .catch(() => undefined);
      headers = reply?.response.headers;
      if (headers === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(headers, 'the key never got its place in flight back');
    // 10 a minute, one every 6 s: the 3 or more tokens the cut stream produced are not back yet.
    const remaining = Number(headers.get('anthropic-ratelimit-output-tokens-remaining'));
    assert.ok(remaining <= 7, `output tokens remaining ${remaining}`);
  });
});

describe('requests in flight, from their first byte (issue 31)', () => {
  test("a request still sending its body holds the key's place: the next is a 429 before its body is read", async () => {
    const port = Number(new URL(service.baseURL).port);
    const body = JSON.stringify({ model: 'slow', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
    const head = (length: number) =>
      `POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${KEYS.slow}\r\nanthropic-version: 2023-06-01\r\n` +
      `content-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;
    // The first request sends its head and half its body, and waits.
    const holding = connect(port, '127.0.0.1');
    await once(holding, 'connect');
    holding.write(head(body.length) + body.slice(0, 10));
    holding.on('data', () => undefined);
    try {
      // The second sends only its head: the 429 comes without a byte of its body.
      const second = connect(port, '127.0.0.1');
      await once(second, 'connect');
      second.write(head(30 * 1024 * 1024));
      const [reply] = (await once(second, 'data')) as [Buffer];
      second.destroy();
      assert.match(reply.toString(), /^HTTP\/1\.1 429 /);
      assert.match(reply.toString(), /limit of 1 requests in flight is reached/);
    } finally {
      holding.destroy();
    }
    // The held request's place comes back once its client has gone.
    let answered = false;
    for (let attempt = 0; attempt < 50 && !answered; attempt += 1) {
      answered = await ask(KEYS.slow, 'slow').then(
        () => true,
        () => false,
      );
      if (!answered) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(answered, 'the place in flight never came back');
  });
});

describe('seen per key', () => {
  test('GET /v1/usage answers an admin key with requests and tokens per key and model, and refuses the others', async () => {
    for (const key of [KEYS.teamA, TEST_API_KEY]) {
      const refused = await fetch(`${service.baseURL}/v1/usage`, {
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      });
      assert.equal(refused.status, 403);
      assert.equal(((await refused.json()) as { error: { type: string } }).error.type, 'permission_error');
    }
    const response = await fetch(`${service.baseURL}/v1/usage`, {
      headers: { 'x-api-key': KEYS.ops, 'anthropic-version': '2023-06-01' },
    });
    assert.equal(response.status, 200);
    const usage = (await response.json()) as {
      since: string;
      data: Array<{ key_id: string; model: string; requests: number; input_tokens: number; output_tokens: number }>;
    };
    assert.ok(Date.parse(usage.since) <= Date.now());
    const teamA = usage.data.find((row) => row.key_id === 'team-a' && row.model === 'mid-newer');
    assert.ok(teamA, JSON.stringify(usage.data));
    assert.ok(teamA.requests >= 2, 'the answered request and the refused one');
    assert.ok(teamA.input_tokens > 0 && teamA.output_tokens > 0, JSON.stringify(teamA));
    const slow = usage.data.find((row) => row.key_id === 'slow' && row.model === 'slow');
    assert.ok(slow && slow.output_tokens >= 3, `the cut stream's output is counted: ${JSON.stringify(slow)}`);
    assert.ok(
      usage.data.some((row) => row.key_id.startsWith('key-')),
      'a plain key by its hash prefix',
    );
  });

  test('the access log line and the metrics carry the key id', async () => {
    const line = logLines.find((entry) => entry.msg === 'request' && entry.keyId === 'team-b');
    assert.ok(line, 'no access log line of team-b');
    const metrics = await (await fetch(`${service.baseURL}/metrics`, { headers: { 'x-api-key': KEYS.ops } })).text();
    assert.match(metrics, /mms_requests_total\{route="\/v1\/messages",key="team-b",model="large-newer"/);
    assert.match(metrics, /mms_input_tokens_total\{key="team-a",model="mid-newer",backend="scripted"\} \d+/);
    assert.match(metrics, /mms_rate_limited_total\{key="burst",limit="requests"\} [1-9]/);
    assert.match(metrics, /mms_rate_limited_total\{key="slow",limit="concurrent"\} [1-9]/);
  });
});
