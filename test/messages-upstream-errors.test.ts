/**
 * The messages-upstream backend's errors: upstream statuses and mid-stream error events keep
 * their type and message, our rules run before the upstream is asked, and exact failures from
 * small raw servers (raw-upstream.ts in @model-messages/testing): envelopes, cut and split streams, refused
 * connections, a silent upstream.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import {
  answerCount,
  closedPortURL,
  errorEnvelope,
  modelsWithBackend,
  postJson,
  rawUpstream,
  sseFrames,
  startService,
  streamOf,
  streamOpening,
  type RawUpstream,
  type RunningService,
} from '@model-messages/testing';
import {
  hello,
  json,
  LOOKUP,
  startUpstreamPair,
  stream,
  type ErrorBody,
  type UpstreamPair,
} from './messages-upstream-support.js';

let pair: UpstreamPair;
let front: RunningService;
before(async () => {
  pair = await startUpstreamPair();
  front = pair.front;
});
after(() => pair.close());

describe('errors from the upstream keep their type and message', () => {
  for (const [fault, status, type] of [
    ['http-500', 500, 'api_error'],
    ['http-529', 529, 'overloaded_error'],
    ['http-429', 429, 'rate_limit_error'],
  ] as const) {
    test(`${fault}: ${status} ${type}, retry-after where the upstream sent one`, async () => {
      const response = await postJson(front, '/v1/messages', hello, { 'mms-fault': fault });
      assert.equal(response.status, status);
      const body = (await response.json()) as ErrorBody;
      assert.deepEqual(body.error, { type, message: `Injected fault: ${fault}` });
      assert.equal(response.headers.get('retry-after'), status === 500 ? null : '1');
    });
  }

  test('an error event after output stays an error event after that output, with its type and message', async () => {
    const { response, events } = await stream(front, hello, { 'mms-fault': 'stream-error' });
    assert.equal(response.status, 200);
    const names = events.map((event) => event.event).filter((name) => name !== 'ping');
    assert.deepEqual(names, ['message_start', 'content_block_start', 'content_block_delta', 'error']);
    assert.deepEqual(events.at(-1)?.data.error, { type: 'api_error', message: 'Injected fault: stream-error' });
  });

  test('our rules run first: a refused request never reaches the upstream', async () => {
    const seen = await rawUpstream((_request, response) => response.writeHead(500).end());
    const relay = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: seen.baseURL }),
    });
    try {
      const strict = {
        ...LOOKUP,
        strict: true,
        input_schema: { ...LOOKUP.input_schema, properties: { word: { type: 'string', maxLength: 3 } } },
      };
      const response = await postJson(relay, '/v1/messages', { ...hello, tools: [strict] });
      assert.equal(response.status, 400);
      assert.match(((await response.json()) as ErrorBody).error.message, /maxLength/);
      assert.equal(seen.requests.length, 0);
    } finally {
      await relay.close();
      await seen.close();
    }
  });

  describe('exact failures from a raw upstream', () => {
    let raw: RawUpstream;
    let relay: RunningService;
    /** What the raw upstream does next, chosen per test. */
    let answer: (response: ServerResponse) => void;

    before(async () => {
      raw = await rawUpstream((request, response) => answerCount(request, response) || answer(response));
      relay = await startService({
        models: modelsWithBackend({ type: 'messages-upstream', baseURL: raw.baseURL, apiKey: 'upstream-key-123' }),
      });
    });
    after(async () => {
      await relay.close();
      await raw.close();
    });

    test('a 400 envelope comes back as the same 400 and message', async () => {
      answer = (response) =>
        response
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify(errorEnvelope('invalid_request_error', 'messages.0: upstream says no')));
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 400);
      assert.deepEqual(((await response.json()) as ErrorBody).error, {
        type: 'invalid_request_error',
        message: 'messages.0: upstream says no',
      });
    });

    test("a 401 is about this service's upstream key, not the caller's: a 500 naming the key", async () => {
      answer = (response) =>
        response
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify(errorEnvelope('authentication_error', 'invalid x-api-key')));
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 500);
      const error = ((await response.json()) as ErrorBody).error;
      assert.equal(error.type, 'api_error');
      assert.match(error.message, /model mid-newer was refused by its upstream \(authentication_error, 401\).*apiKey/);
    });

    test('a 529 with its own retry-after keeps it', async () => {
      answer = (response) =>
        response
          .writeHead(529, { 'content-type': 'application/json', 'retry-after': '7' })
          .end(JSON.stringify(errorEnvelope('overloaded_error', 'busy upstream')));
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 529);
      assert.equal(response.headers.get('retry-after'), '7');
      assert.deepEqual(((await response.json()) as ErrorBody).error, {
        type: 'overloaded_error',
        message: 'busy upstream',
      });
    });

    test("an upstream mms's error event before any output, with its code and retry-after, is its 529 here", async () => {
      // An mms upstream opens its stream at admission: its 529 comes after message_start and a
      // ping, with what the status reply's headers would have said inside the event.
      const opening = streamOpening('unused').slice(0, 1);
      const overloaded = { ...errorEnvelope('overloaded_error', 'busy upstream'), mms_error_code: 'overloaded' };
      answer = (response) =>
        response
          .writeHead(200, { 'content-type': 'text/event-stream' })
          .end(sseFrames([...opening, { type: 'ping' }, { ...overloaded, mms_retry_after: 7 }]));
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 529);
      assert.equal(response.headers.get('retry-after'), '7');
      assert.deepEqual(((await response.json()) as ErrorBody).error, {
        type: 'overloaded_error',
        message: 'busy upstream',
      });
      const { events } = await stream(relay, hello);
      assert.deepEqual(
        events.map((event) => event.event),
        ['message_start', 'ping', 'error'],
      );
      assert.equal(events.at(-1)?.data.mms_error_code, 'overloaded');
      assert.equal(events.at(-1)?.data.mms_retry_after, 7);
    });

    test('an overloaded_error event mid-stream is relayed as that error event', async () => {
      answer = (response) =>
        response
          .writeHead(200, { 'content-type': 'text/event-stream' })
          .end(sseFrames([...streamOpening('Half'), errorEnvelope('overloaded_error', 'Overloaded midway')]));
      const { events } = await stream(relay, hello);
      assert.equal(events.at(-1)?.event, 'error');
      assert.deepEqual(events.at(-1)?.data.error, { type: 'overloaded_error', message: 'Overloaded midway' });
      assert.ok(events.some((event) => event.event === 'content_block_delta'));
    });

    test('a stream cut before message_stop is an error, never a finished message', async () => {
      answer = (response) =>
        response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames(streamOpening('Cut')));
      const { events } = await stream(relay, hello);
      assert.equal(events.at(-1)?.event, 'error');
      assert.match(String((events.at(-1)?.data.error as { message: string }).message), /ended before message_stop/);
      assert.ok(!events.some((event) => event.event === 'message_stop'));
    });

    test('events split anywhere across chunks, CRLF line ends included, parse the same', async () => {
      answer = (response) => {
        const text = sseFrames(streamOf('Split über chunks')).replaceAll('\n', '\r\n');
        const bytes = Buffer.from(text);
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        let offset = 0;
        const step = () => {
          if (offset >= bytes.length) return void response.end();
          response.write(bytes.subarray(offset, offset + 7));
          offset += 7;
          setImmediate(step);
        };
        step();
      };
      const { reply } = await json(relay, hello);
      assert.deepEqual(
        reply.content.map((block) => block.text),
        ['Split über chunks'],
      );
    });

    test('the upstream key goes as x-api-key, with the version header', async () => {
      answer = (response) =>
        response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseFrames(streamOf('ok')));
      await json(relay, hello);
      const sent = raw.requests.at(-1);
      assert.equal(sent?.path, '/v1/messages');
      assert.equal(sent?.headers['x-api-key'], 'upstream-key-123');
      assert.equal(sent?.headers['anthropic-version'], '2023-06-01');
    });
  });

  test('connection refused is a 500 api_error naming the cause', async () => {
    const relay = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: await closedPortURL() }),
    });
    try {
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 500);
      const error = ((await response.json()) as ErrorBody).error;
      assert.equal(error.type, 'api_error');
      assert.match(error.message, /ECONNREFUSED/);
    } finally {
      await relay.close();
    }
  });

  test('an upstream with no output within firstByteTimeoutMs is a 504 timeout_error', async () => {
    // Headers and message_start, then nothing: no output.
    const silent = await rawUpstream(
      (request, response) =>
        answerCount(request, response) ||
        void response
          .writeHead(200, { 'content-type': 'text/event-stream' })
          .write(sseFrames(streamOpening('x').slice(0, 1))),
    );
    const relay = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: silent.baseURL, firstByteTimeoutMs: 200 }),
    });
    try {
      const response = await postJson(relay, '/v1/messages', hello);
      assert.equal(response.status, 504);
      const error = ((await response.json()) as ErrorBody).error;
      assert.equal(error.type, 'timeout_error');
      assert.match(error.message, /firstByteTimeoutMs/);
    } finally {
      await relay.close();
      await silent.close();
    }
  });
});
