/**
 * A 2xx whose bytes arrived but are no message (issue 32): an answer-level failure, not a
 * transport one. Spec, Client retry policy 2: "a successful response with no usable answer is
 * retried at most once"; policy 4: "A 2xx response counts once, even when its JSON is invalid".
 * Against a raw server that answers 200 with garbage, a proxy's page, truncated JSON or broken
 * events: two attempts in the whole call at most, each 2xx one decline; a connection that breaks
 * mid-stream stays the HTTP layer's to retry.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RawMessagesHandler } from '@model-messages/testing';
import type { DeclineInfo, RetryInfo } from '@model-messages/client';
import {
  answer,
  ask,
  cutMidStream,
  finish,
  frame,
  openStream,
  start,
  toolBlock,
  truncated,
  useRawMessagesClient,
} from './raw-messages-support.js';

const fake = useRawMessagesClient();

const garbageEvents: RawMessagesHandler = (response) => {
  openStream(response);
  response.end(start() + 'event: content_block_start\ndata: {"type": "content_block_st\n\n');
};
const proxyPage: RawMessagesHandler = (response) => {
  response.writeHead(200, { 'content-type': 'text/html' });
  response.end('<html>\n<body><h1>502 Bad Gateway</h1></body>\n</html>\n');
};
const truncatedJson: RawMessagesHandler = (response) => {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end('{"id": "msg_1", "type": "message", "content": [{"type": "tool_use", "name": "record_an');
};
const brokenMessageStart: RawMessagesHandler = (response) => {
  openStream(response);
  response.end(frame({ type: 'message_start' }) + toolBlock('{"name":"Ada"}') + finish('tool_use', 20, 9));
};
const noStopReason: RawMessagesHandler = (response) => {
  openStream(response);
  response.end(start() + toolBlock('{"name":"Ada"}') + frame({ type: 'message_stop' }));
};
const unreadableBodies: Array<[string, RawMessagesHandler, RegExp]> = [
  ['broken event frames', garbageEvents, /\(text\/event-stream\): event 2: /],
  ["a proxy's HTML page under a 200", proxyPage, /\(text\/html\): no event stream: <html>/],
  ['truncated JSON', truncatedJson, /\(application\/json\): /],
  ['a message_start without its message', brokenMessageStart, /event 1: a message_start without a message/],
  ['a message_stop with no stop reason', noStopReason, /the stream ended before message_stop/],
];

/** A Client of the fake with the default 4 HTTP retries, recording retries and declines. */
function observedClient() {
  const retries: RetryInfo[] = [];
  const declines: DeclineInfo[] = [];
  const client = fake.client({
    maxRetries: 4,
    hooks: { onRetry: (info) => retries.push(info), onDecline: (info) => declines.push(info) },
  });
  return { client, retries, declines };
}

describe('an unreadable 2xx is retried once above the HTTP layer and counted as a decline', () => {
  for (const [name, handler, detail] of unreadableBodies) {
    test(`${name}, every time: 2 attempts, not 5; an http failure naming the body; one decline per 2xx`, async () => {
      fake.handlers = [handler];
      const { client, retries, declines } = observedClient();
      const result = await client.structured(ask);
      assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
      assert.equal(result.attempts, 2);
      assert.equal(result.status, 200);
      assert.match(result.message, /^the 200 response's body is unreadable /);
      assert.match(result.message, detail);
      assert.match(result.message, / after the one retry$/);
      assert.deepEqual(result.requestIds, ['req_1', 'req_2']);
      assert.deepEqual(
        retries.map((retry) => retry.layer),
        ['answer'],
      );
      assert.deepEqual(client.declineCounts(), {
        total: 2,
        byModel: { mid: 2 },
        byTool: { record_answer: 2 },
        byModelAndTool: { mid: { record_answer: 2 } },
      });
      assert.deepEqual(
        declines.map((decline) => [decline.model, decline.tool, decline.text, decline.requestId]),
        [
          ['mid', 'record_answer', '', 'req_1'],
          ['mid', 'record_answer', '', 'req_2'],
        ],
      );
      assert.match(declines[0]?.unreadable ?? '', detail);
    });
  }

  test('an unreadable 2xx, then an answer: the same request again, the answer used, one decline', async () => {
    fake.handlers = [proxyPage, answer()];
    const { client, retries } = observedClient();
    const result = await client.structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.value, { name: 'Ada' });
    assert.equal(result.attempts, 2);
    assert.deepEqual(fake.bodies[1], fake.bodies[0], 'nothing to replay: the request as it was');
    assert.match(retries[0]?.reason ?? '', /^the 2xx body was unreadable; sending the request again: /);
    assert.equal(client.declineCounts().total, 1);
  });

  test('the one retry is shared with the other answer-level failures: truncated, then unreadable, ends there', async () => {
    fake.handlers = [truncated(), garbageEvents];
    const { client } = observedClient();
    const result = await client.structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.attempts, 2);
    assert.equal(fake.bodies[1]?.max_tokens, 1_024);
  });

  test('once in the whole call: after a guardrail retry, a second unreadable 2xx is not retried again', async () => {
    fake.handlers = [proxyPage, answer(), proxyPage];
    const { client, retries } = observedClient();
    const result = await client.structured({ ...ask, guardrails: [() => 'try again'] });
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.attempts, 3);
    assert.match(result.message, /; not retried: the call already spent its one retry of an unreadable 2xx$/);
    assert.deepEqual(
      retries.map((retry) => retry.layer),
      ['answer', 'guardrail'],
    );
    assert.equal(client.declineCounts().total, 2);
  });

  test('client.messages: an unreadable 2xx is sent once more, and only once', async () => {
    const plain = { model: 'mid', max_tokens: 64, messages: [{ role: 'user' as const, content: 'hi' }] };
    fake.handlers = [truncatedJson, answer()];
    const recovered = await observedClient().client.messages(plain);
    assert.ok(recovered.ok, JSON.stringify(recovered));
    assert.equal(recovered.attempts, 2);
    fake.bodies = [];
    fake.handlers = [truncatedJson];
    const { client } = observedClient();
    const failed = await client.messages(plain);
    assert.ok(!failed.ok && failed.kind === 'http', JSON.stringify(failed));
    assert.equal(failed.attempts, 2);
    assert.equal(client.declineCounts().total, 0, 'a plain call names no output tool to count against');
  });
});

describe('a research call retries an unreadable 2xx once over both passes', () => {
  const prose: RawMessagesHandler = (response) => {
    openStream(response);
    response.end(
      start() +
        frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Ada wrote it.' } }) +
        frame({ type: 'content_block_stop', index: 0 }) +
        finish('end_turn', 20, 5),
    );
  };
  const research = { question: 'Who wrote it?', schema: ask.schema };

  test('pass 1 unreadable every time: 2 attempts, no decline (pass 1 has no output tool)', async () => {
    fake.handlers = [garbageEvents];
    const { client } = observedClient();
    const result = await client.research(research);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.attempts, 2);
    assert.match(result.message, /; not retried: pass 1 already spent its one retry \(an unreadable 2xx\)$/);
    assert.equal(client.declineCounts().total, 0);
  });

  test('pass 1 retried once; an unreadable pass 2 is then not retried, and keeps the research', async () => {
    fake.handlers = [proxyPage, prose, proxyPage];
    const { client } = observedClient();
    const result = await client.research(research);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.attempts, 3);
    assert.equal(result.research?.prose, 'Ada wrote it.');
    assert.match(result.message, /; not retried: the call already spent its one retry of an unreadable 2xx$/);
    assert.deepEqual(client.declineCounts().byModelAndTool, { mid: { record_answer: 1 } });
  });
});

describe('a connection that breaks mid-stream stays a transport failure', () => {
  test('cut after some events every time: retried by the HTTP layer, 1 + maxRetries attempts, no decline', async () => {
    fake.handlers = [cutMidStream];
    const retries: RetryInfo[] = [];
    const client = fake.client({ maxRetries: 2 }, retries);
    const result = await client.structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.attempts, 3);
    assert.match(result.message, /connection failed \(stream\)/);
    assert.deepEqual(
      retries.map((retry) => retry.layer),
      ['http', 'http'],
    );
    assert.equal(client.declineCounts().total, 0);
  });

  test('SSE fields cut off before their frame ended, with a clean end: a stream cut short, not an unreadable body', async () => {
    fake.handlers = [
      (response) => {
        openStream(response);
        response.end('event: message_start\ndata: {"type": "message_st');
      },
      answer(),
    ];
    const retries: RetryInfo[] = [];
    const result = await fake.client({}, retries).structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(
      retries.map((retry) => retry.layer),
      ['http'],
    );
  });
});
