/**
 * The client's transport and retry ladder against a raw HTTP server (raw-messages-support.ts):
 * exact statuses and headers (retry-after-ms, x-should-retry), error events before and after
 * content, streams that stall or break, timers and deadlines.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientConfigError, type RetryInfo } from '@model-messages/client';
import { closedPortURL } from '@model-messages/testing';
import {
  answer,
  ask,
  cutMidStream,
  errorEvent,
  frame,
  openStream,
  stall,
  start,
  status,
  usage,
  useRawMessagesClient,
} from './raw-messages-support.js';

const fake = useRawMessagesClient();

describe('headers and statuses', () => {
  test('the request carries the key, the version header, JSON and stream: true', async () => {
    fake.handlers = [answer()];
    const result = await fake.client().structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.value, { name: 'Ada' });
    assert.equal(fake.requestHeaders[0]?.['x-api-key'], 'key-0123456789');
    assert.equal(fake.requestHeaders[0]?.['anthropic-version'], '2023-06-01');
    assert.equal(fake.requestHeaders[0]?.['content-type'], 'application/json');
    assert.equal(fake.bodies[0]?.stream, true);
  });

  test('retry-after-ms is honoured before retry-after', async () => {
    const retries: RetryInfo[] = [];
    fake.handlers = [status(503, { 'retry-after-ms': '120', 'retry-after': '30' }, 'overloaded_error'), answer()];
    const result = await fake.client({}, retries).structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.requestIds, ['req_1', 'req_2']);
    assert.deepEqual(
      retries.map((retry) => [retry.layer, retry.delayMs]),
      [['http', 120]],
    );
  });

  test('x-should-retry: false stops a retryable status; true retries a 400', async () => {
    fake.handlers = [status(503, { 'x-should-retry': 'false' })];
    const refused = await fake.client().structured(ask);
    assert.ok(!refused.ok && refused.kind === 'http', JSON.stringify(refused));
    assert.equal(refused.attempts, 1);
    assert.match(refused.message, /x-should-retry: false/);
    fake.bodies = [];
    fake.handlers = [status(400, { 'x-should-retry': 'true' }, 'invalid_request_error'), answer()];
    const retried = await fake.client().structured(ask);
    assert.ok(retried.ok, JSON.stringify(retried));
    assert.equal(retried.attempts, 2);
  });

  test('a service that answers JSON despite stream: true is understood', async () => {
    fake.handlers = [
      (response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            id: 'msg',
            type: 'message',
            role: 'assistant',
            model: 'mid',
            content: [{ type: 'tool_use', id: 't', name: 'record_answer', input: { name: 'Bo' } }],
            stop_reason: 'tool_use',
            stop_sequence: null,
            usage: usage(5, 5),
          }),
        );
      },
    ];
    const result = await fake.client().structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.value, { name: 'Bo' });
  });
});

describe('stream errors', () => {
  test('an overloaded error event before any content is retried', async () => {
    const retries: RetryInfo[] = [];
    fake.handlers = [
      (response) => {
        openStream(response);
        response.end(start() + frame({ type: 'ping' }) + errorEvent('overloaded_error'));
      },
      answer(),
    ];
    const result = await fake.client({}, retries).structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.match(retries[0]?.reason ?? '', /overloaded_error event came before any content/);
  });

  test("an api_error event before any content is retried as its 500 was, after the event's own retry-after", async () => {
    // What an mms sends when its stream opened at admission and the backend then failed.
    const retries: RetryInfo[] = [];
    fake.handlers = [
      (response) => {
        openStream(response);
        const event = {
          type: 'error',
          error: { type: 'api_error', message: 'engine down' },
          mms_error_code: 'internal',
        };
        response.end(start() + frame({ type: 'ping' }) + frame(event));
      },
      (response) => {
        openStream(response);
        const event = {
          type: 'error',
          error: { type: 'rate_limit_error', message: 'slow down' },
          mms_error_code: 'rate_limited',
          mms_retry_after: 0.05,
        };
        response.end(start() + frame(event));
      },
      answer(),
    ];
    const result = await fake.client({}, retries).structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.attempts, 3);
    assert.match(retries[0]?.reason ?? '', /api_error event came before any content/);
    assert.match(retries[1]?.reason ?? '', /rate_limit_error event came before any content/);
    assert.equal(retries[1]?.delayMs, 50);
  });

  test('an invalid_request_error event before any content is not retried', async () => {
    fake.handlers = [
      (response) => {
        openStream(response);
        response.end(start() + errorEvent('invalid_request_error'));
      },
    ];
    const result = await fake.client().structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.errorType, 'invalid_request_error');
    assert.equal(result.attempts, 1);
  });

  test('an overloaded error event after content is a failure, not retried', async () => {
    fake.handlers = [
      (response) => {
        openStream(response);
        response.end(
          start() +
            frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
            errorEvent('overloaded_error'),
        );
      },
    ];
    const result = await fake.client().structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.errorType, 'overloaded_error');
    assert.equal(result.attempts, 1);
  });

  test('a stream cut off before message_stop is a connection failure and is retried', async () => {
    fake.handlers = [cutMidStream, answer()];
    const result = await fake.client().structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.attempts, 2);
  });
});

describe('timers inside the deadline', () => {
  test('a stalled stream trips the idle timer, is retried, and fails as timeout before the deadline', async () => {
    fake.handlers = [stall(start())];
    const started = Date.now();
    const result = await fake
      .client({ timeouts: { idleMs: 150 }, maxRetries: 2 })
      .structured({ ...ask, timeoutMs: 5_000 });
    assert.ok(Date.now() - started < 5_000, "before the caller's deadline");
    assert.ok(!result.ok && result.kind === 'timeout', JSON.stringify(result));
    assert.equal(result.phase, 'idle');
    assert.equal(result.attempts, 3);
    assert.match(result.message, /within the idle timer \(150 ms\) after 1 events/);
  });

  test('no response headers trips the connect timer; headers with no event trip the first-event timer', async () => {
    fake.handlers = [() => {}];
    const silent = await fake.client({ timeouts: { connectMs: 150 }, maxRetries: 0 }).structured(ask);
    assert.ok(!silent.ok && silent.kind === 'timeout', JSON.stringify(silent));
    assert.equal(silent.phase, 'connect');
    fake.handlers = [
      (response) => {
        openStream(response);
        response.flushHeaders();
      },
    ];
    const headersOnly = await fake.client({ timeouts: { firstEventMs: 150 }, maxRetries: 0 }).structured(ask);
    assert.ok(!headersOnly.ok && headersOnly.kind === 'timeout', JSON.stringify(headersOnly));
    assert.equal(headersOnly.phase, 'first-event');
  });

  test("a stream that trickles pings past the deadline fails with detail before the caller's deadline", async () => {
    fake.handlers = [
      (response) => {
        openStream(response);
        response.write(start());
        const timer = setInterval(() => response.write(frame({ type: 'ping' })), 30);
        response.on('close', () => clearInterval(timer));
      },
    ];
    const started = Date.now();
    const result = await fake.client().structured({ ...ask, timeoutMs: 2_000 });
    assert.ok(Date.now() - started < 2_000, "before the caller's deadline");
    assert.ok(!result.ok && result.kind === 'timeout', JSON.stringify(result));
    assert.equal(result.phase, 'deadline');
    assert.match(result.message, /the deadline came during the idle phase after \d+ events/);
  });

  test('a deadline that is no time (null, an Invalid Date) is a ClientConfigError at call time, nothing sent', async () => {
    fake.handlers = [answer()];
    // Plain JS gets past the types: null would otherwise read as the epoch and time out silently.
    for (const deadline of [null, new Date('not a date')] as unknown as Date[]) {
      await assert.rejects(
        fake.client().structured({ ...ask, deadline }),
        (error: unknown) =>
          error instanceof ClientConfigError &&
          /^deadline: must be a Date or epoch milliseconds, got (null|Invalid Date)$/.test(error.message),
      );
      await assert.rejects(
        fake
          .client()
          .messages({ model: 'mid', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, { deadline }),
        ClientConfigError,
      );
    }
    assert.equal(fake.bodies.length, 0);
  });

  test("the caller's abort signal ends the call at once", async () => {
    fake.handlers = [stall(start())];
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 100);
    await assert.rejects(fake.client().structured({ ...ask, signal: controller.signal }), /caller gave up/);
  });

  test('connection refused is retried, then reported with its cause', async () => {
    const result = await fake.client({ baseURL: await closedPortURL(), maxRetries: 2 }).structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.status, undefined);
    assert.equal(result.attempts, 3);
    assert.match(result.message, /ECONNREFUSED/);
  });
});

describe("a deadline beyond Node's timer range (2^31-1 ms, about 24.8 days)", () => {
  const THIRTY_DAYS_MS = 30 * 24 * 3_600_000;
  /** Node sets an overlong timer to 1 ms and says so with this warning: collects them while `run` runs. */
  async function overflowWarnings(run: () => Promise<void>): Promise<string[]> {
    const warnings: string[] = [];
    const listen = (warning: Error) => {
      if (warning.name === 'TimeoutOverflowWarning') warnings.push(warning.message);
    };
    process.on('warning', listen);
    try {
      await run();
      // Warnings are emitted on the next tick: let them arrive before counting.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listen);
    }
    return warnings;
  }

  test('a far deadline or a 30-day timeoutMs waits for a server that answers after 100 ms', async () => {
    for (const limit of [{ deadline: new Date('2100-01-01') }, { timeoutMs: THIRTY_DAYS_MS }]) {
      fake.bodies = [];
      fake.handlers = [(response, body) => setTimeout(() => answer()(response, body), 100)];
      const warnings = await overflowWarnings(async () => {
        const result = await fake.client().structured({ ...ask, ...limit });
        assert.ok(result.ok, `${JSON.stringify(limit)}: ${JSON.stringify(result)}`);
        assert.deepEqual(result.value, { name: 'Ada' });
        assert.equal(result.attempts, 1);
      });
      assert.deepEqual(warnings, [], JSON.stringify(limit));
    }
  });

  test("a server's wait of 30 days inside a far deadline is waited, not cut to 1 ms", async () => {
    fake.handlers = [status(503, { 'retry-after-ms': String(THIRTY_DAYS_MS) }, 'overloaded_error'), answer()];
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 300);
    const warnings = await overflowWarnings(async () => {
      await assert.rejects(
        fake.client().structured({ ...ask, deadline: new Date('2100-01-01'), signal: controller.signal }),
        /caller gave up/,
      );
    });
    assert.equal(fake.bodies.length, 1, "the retry waits for the server's 30 days");
    assert.deepEqual(warnings, []);
  });
});
