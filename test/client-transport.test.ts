/**
 * The client's transport and retry ladder against a raw HTTP server, for what the real service
 * cannot be made to do on cue: exact statuses and headers (retry-after-ms, x-should-retry), an
 * overloaded error event, streams that stall or break, and exact stop reasons and usage.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, ClientConfigError, type ClientOptions, type RetryInfo } from '@mms/client';

type Handler = (response: ServerResponse, body: Record<string, unknown>) => void;

let server: Server;
let baseURL: string;
let handlers: Handler[] = [];
let bodies: Array<Record<string, unknown>> = [];
let requestHeaders: IncomingMessage['headers'][] = [];

before(async () => {
  server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk));
    request.on('end', () => {
      const index = bodies.length;
      bodies.push(JSON.parse(text) as Record<string, unknown>);
      requestHeaders.push(request.headers);
      response.setHeader('request-id', `req_${index + 1}`);
      (handlers[Math.min(index, handlers.length - 1)] ?? ((res) => res.end()))(response, bodies[index]!);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  bodies = [];
  requestHeaders = [];
  handlers = [];
});

const usage = (input: number, output: number) => ({ input_tokens: input, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, server_tool_use: null });
const frame = (event: { type: string; [field: string]: unknown }) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
const start = (input = 20) => frame({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'mid', content: [], stop_reason: null, stop_sequence: null, usage: usage(input, 1) } });
const toolBlock = (json: string) =>
  frame({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'record_answer', input: {} } } ) +
  frame({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: json } } ) +
  frame({ type: 'content_block_stop', index: 0 } );
const finish = (stopReason: string, input: number, output: number) => frame({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: usage(input, output) } ) + frame({ type: 'message_stop' });
const errorEvent = (type: string) => frame({ type: 'error', error: { type, message: `${type} injected` } } );

function openStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
}
const answer = (input = 20, output = 9): Handler => (response) => {
  openStream(response);
  response.end(start(input) + toolBlock('{"name":"Ada"}') + finish('tool_use', input, output));
};
const status = (code: number, headers: Record<string, string> = {}, type = 'api_error'): Handler => (response) => {
  response.writeHead(code, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify({ type: 'error', error: { type, message: `status ${code}` }, request_id: null }));
};
const stall = (prefix: string): Handler => (response) => {
  openStream(response);
  response.write(prefix);
};

const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false };
// Transport is the subject here: the schema as given, without the Insufficient data envelope.
const ask = { schema, instructions: 'Extract.', input: 'Ada', maxTokens: 512, insufficientData: false };

function client(options: Partial<ClientOptions> = {}, retries: RetryInfo[] = []): Client {
  return new Client({ baseURL, apiKey: 'key-0123456789', models: { small: 'small', mid: { id: 'mid', maxOutputTokens: 64_000 }, large: 'large' }, backoff: { initialMs: 10, maxMs: 40 }, hooks: { onRetry: (info) => retries.push(info) }, ...options });
}

describe('headers and statuses', () => {
  test('the request carries the key, the version header, JSON and stream: true', async () => {
    handlers = [answer()];
    const result = await client().structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.value, { name: 'Ada' });
    assert.equal(requestHeaders[0]?.['x-api-key'], 'key-0123456789');
    assert.equal(requestHeaders[0]?.['anthropic-version'], '2023-06-01');
    assert.equal(requestHeaders[0]?.['content-type'], 'application/json');
    assert.equal(bodies[0]?.stream, true);
  });

  test('retry-after-ms is honoured before retry-after', async () => {
    const retries: RetryInfo[] = [];
    handlers = [status(503, { 'retry-after-ms': '120', 'retry-after': '30' }, 'overloaded_error'), answer()];
    const result = await client({}, retries).structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.requestIds, ['req_1', 'req_2']);
    assert.deepEqual(retries.map((retry) => [retry.layer, retry.delayMs]), [['http', 120]]);
  });

  test('x-should-retry: false stops a retryable status; true retries a 400', async () => {
    handlers = [status(503, { 'x-should-retry': 'false' })];
    const refused = await client().structured(ask);
    assert.ok(!refused.ok && refused.kind === 'http', JSON.stringify(refused));
    assert.equal(refused.attempts, 1);
    assert.match(refused.message, /x-should-retry: false/);
    bodies = [];
    handlers = [status(400, { 'x-should-retry': 'true' }, 'invalid_request_error'), answer()];
    const retried = await client().structured(ask);
    assert.ok(retried.ok, JSON.stringify(retried));
    assert.equal(retried.attempts, 2);
  });

  test('a service that answers JSON despite stream: true is understood', async () => {
    handlers = [(response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: 'msg', type: 'message', role: 'assistant', model: 'mid', content: [{ type: 'tool_use', id: 't', name: 'record_answer', input: { name: 'Bo' } }], stop_reason: 'tool_use', stop_sequence: null, usage: usage(5, 5) }));
    }];
    const result = await client().structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.value, { name: 'Bo' });
  });
});

describe('stream errors', () => {
  test('an overloaded error event before any content is retried', async () => {
    const retries: RetryInfo[] = [];
    handlers = [(response) => {
      openStream(response);
      response.end(start() + frame({ type: 'ping' }) + errorEvent('overloaded_error'));
    }, answer()];
    const result = await client({}, retries).structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.match(retries[0]?.reason ?? '', /overloaded error event came before any content/);
  });

  test('an overloaded error event after content is a failure, not retried', async () => {
    handlers = [(response) => {
      openStream(response);
      response.end(start() + frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } ) + errorEvent('overloaded_error'));
    }];
    const result = await client().structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.errorType, 'overloaded_error');
    assert.equal(result.attempts, 1);
  });

  test('a stream cut off before message_stop is a connection failure and is retried', async () => {
    handlers = [(response) => {
      openStream(response);
      response.write(start() + toolBlock('{"name":"Ada"}'));
      setTimeout(() => response.destroy(), 20);
    }, answer()];
    const result = await client().structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.attempts, 2);
  });
});

describe('a 2xx with an unreadable body: a broken transport, retried, never a decline (decision 0010)', () => {
  test('a proxy\'s page under a 200 is retried and the next answer is used', async () => {
    const retries: RetryInfo[] = [];
    handlers = [(response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('<html>gateway says hi</html>');
    }, answer()];
    const tried = client({}, retries);
    const result = await tried.structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.attempts, 2);
    assert.deepEqual(retries.map((retry) => retry.layer), ['http']);
    assert.equal(tried.declineCounts().total, 0);
  });

  test('broken event frames every time: an http failure naming the unreadable body, no decline counted', async () => {
    handlers = [(response) => {
      openStream(response);
      response.end(start() + 'event: content_block_start\ndata: {"type": "content_block_st\n\n');
    }];
    const tried = client({ maxRetries: 1 });
    const result = await tried.structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.attempts, 2);
    assert.match(result.message, /the 200 response's body is unreadable \(text\/event-stream\): event 2: /);
    assert.deepEqual(result.requestIds, ['req_1', 'req_2']);
    assert.equal(tried.declineCounts().total, 0);
  });

  test('JSON that is not a message is unreadable too', async () => {
    handlers = [(response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"status": "ok"}');
    }];
    const result = await client({ maxRetries: 0 }).structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.match(result.message, /unreadable \(application\/json\): JSON that is not a message/);
  });
});

describe('timers inside the deadline', () => {
  test('a stalled stream trips the idle timer, is retried, and fails as timeout before the deadline', async () => {
    handlers = [stall(start())];
    const started = Date.now();
    const result = await client({ timeouts: { idleMs: 150 }, maxRetries: 2 }).structured({ ...ask, timeoutMs: 5_000 });
    assert.ok(Date.now() - started < 5_000, 'before the caller\'s deadline');
    assert.ok(!result.ok && result.kind === 'timeout', JSON.stringify(result));
    assert.equal(result.phase, 'idle');
    assert.equal(result.attempts, 3);
    assert.match(result.message, /within the idle timer \(150 ms\) after 1 events/);
  });

  test('no response headers trips the connect timer; headers with no event trip the first-event timer', async () => {
    handlers = [() => {}];
    const silent = await client({ timeouts: { connectMs: 150 }, maxRetries: 0 }).structured(ask);
    assert.ok(!silent.ok && silent.kind === 'timeout', JSON.stringify(silent));
    assert.equal(silent.phase, 'connect');
    handlers = [(response) => {
      openStream(response);
      response.flushHeaders();
    }];
    const headersOnly = await client({ timeouts: { firstEventMs: 150 }, maxRetries: 0 }).structured(ask);
    assert.ok(!headersOnly.ok && headersOnly.kind === 'timeout', JSON.stringify(headersOnly));
    assert.equal(headersOnly.phase, 'first-event');
  });

  test('a stream that trickles pings past the deadline fails with detail before the caller\'s deadline', async () => {
    handlers = [(response) => {
      openStream(response);
      response.write(start());
      const timer = setInterval(() => response.write(frame({ type: 'ping' })), 30);
      response.on('close', () => clearInterval(timer));
    }];
    const started = Date.now();
    const result = await client().structured({ ...ask, timeoutMs: 2_000 });
    assert.ok(Date.now() - started < 2_000, 'before the caller\'s deadline');
    assert.ok(!result.ok && result.kind === 'timeout', JSON.stringify(result));
    assert.equal(result.phase, 'deadline');
    assert.match(result.message, /the deadline came during the idle phase after \d+ events/);
  });

  test('a deadline that is no time (null, an Invalid Date) is a ClientConfigError at call time, nothing sent', async () => {
    handlers = [answer()];
    // Plain JS gets past the types: null would otherwise read as the epoch and time out silently.
    for (const deadline of [null, new Date('not a date')] as unknown as Date[]) {
      await assert.rejects(client().structured({ ...ask, deadline }), (error: unknown) => error instanceof ClientConfigError && /^deadline: must be a Date or epoch milliseconds, got (null|Invalid Date)$/.test(error.message));
      await assert.rejects(client().messages({ model: 'mid', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, { deadline }), ClientConfigError);
    }
    assert.equal(bodies.length, 0);
  });

  test('the caller\'s abort signal ends the call at once', async () => {
    handlers = [stall(start())];
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 100);
    await assert.rejects(client().structured({ ...ask, signal: controller.signal }), /caller gave up/);
  });

  test('connection refused is retried, then reported with its cause', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await client({ baseURL: `http://127.0.0.1:${port}`, maxRetries: 2 }).structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.status, undefined);
    assert.equal(result.attempts, 3);
    assert.match(result.message, /ECONNREFUSED/);
  });
});

describe('a deadline beyond Node\'s timer range (2^31-1 ms, about 24.8 days)', () => {
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
      bodies = [];
      handlers = [(response, body) => setTimeout(() => answer()(response, body), 100)];
      const warnings = await overflowWarnings(async () => {
        const result = await client().structured({ ...ask, ...limit });
        assert.ok(result.ok, `${JSON.stringify(limit)}: ${JSON.stringify(result)}`);
        assert.deepEqual(result.value, { name: 'Ada' });
        assert.equal(result.attempts, 1);
      });
      assert.deepEqual(warnings, [], JSON.stringify(limit));
    }
  });

  test('a server\'s wait of 30 days inside a far deadline is waited, not cut to 1 ms', async () => {
    handlers = [status(503, { 'retry-after-ms': String(THIRTY_DAYS_MS) }, 'overloaded_error'), answer()];
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 300);
    const warnings = await overflowWarnings(async () => {
      await assert.rejects(client().structured({ ...ask, deadline: new Date('2100-01-01'), signal: controller.signal }), /caller gave up/);
    });
    assert.equal(bodies.length, 1, 'the retry waits for the server\'s 30 days');
    assert.deepEqual(warnings, []);
  });
});

describe('truncation, exactly', () => {
  const truncated = (input: number): Handler => (response) => {
    openStream(response);
    response.end(start(input) + toolBlock('{"name":"A') + finish('max_tokens', input, 512));
  };

  test('a truncated answer is retried once with max_tokens doubled; usage is summed', async () => {
    handlers = [truncated(20), answer(20, 9)];
    const result = await client().structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(bodies.map((body) => body.max_tokens), [512, 1_024]);
    assert.deepEqual([result.usage.inputTokens, result.usage.outputTokens], [40, 521]);
  });

  test('truncated twice is a truncated failure; never a decline', async () => {
    handlers = [truncated(20)];
    const mine = client();
    const result = await mine.structured(ask);
    assert.ok(!result.ok && result.kind === 'truncated', JSON.stringify(result));
    assert.equal(result.maxTokens, 1_024);
    assert.equal(mine.declineCounts().total, 0);
  });

  test('the doubled budget is capped by what the context leaves', async () => {
    // 200k window - 192,000 input - 5k buffer = 3,000: no room to grow past 4,000.
    handlers = [truncated(192_000)];
    const capped = await client().structured({ ...ask, maxTokens: 4_000 });
    assert.ok(!capped.ok && capped.kind === 'truncated', JSON.stringify(capped));
    assert.equal(capped.attempts, 1);
    // 200k - 190,000 - 5k = 5,000: room to grow from 4,000 to 5,000, not to 8,000.
    bodies = [];
    handlers = [truncated(190_000), answer()];
    const grown = await client().structured({ ...ask, maxTokens: 4_000 });
    assert.ok(grown.ok, JSON.stringify(grown));
    assert.deepEqual(bodies.map((body) => body.max_tokens), [4_000, 5_000]);
  });
});

describe('a retry that grows the prompt past its budget is not sent (decision 0009)', () => {
  // (20,000 window - 4,000 max_tokens - 5,000 buffer) x 4 = 44,000 characters: the first request
  // (40,000 of input) fits; replaying 8,000 more characters does not.
  const small = { id: 'mid', tier: 'mid' as const, contextWindow: 20_000, maxOutputTokens: 8_000 };
  const long = { ...ask, model: small, input: 'y'.repeat(40_000), maxTokens: 4_000 };
  const pad = 'x'.repeat(8_000);
  const text = (words: string): Handler => (response) => {
    openStream(response);
    response.end(start() + frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) + frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: words } }) + frame({ type: 'content_block_stop', index: 0 }) + finish('end_turn', 20, 2_000));
  };
  const writes = (input: unknown): Handler => (response) => {
    openStream(response);
    response.end(start() + toolBlock(JSON.stringify(input)) + finish('tool_use', 20, 2_000));
  };
  const notSent = /the retry was not sent \(prompt_too_long\): the prompt has \d+ characters; mid allows 44000 = \(20000 window - 4000 max_tokens - 5000 buffer\) x 4/;

  test('a decline with a long text: one request, declined, saying the retry was not sent because of its size', async () => {
    handlers = [text(pad), answer()];
    const result = await client().structured(long);
    assert.ok(!result.ok && result.kind === 'declined', JSON.stringify(result).slice(0, 500));
    assert.equal(bodies.length, 1);
    assert.equal(result.attempts, 1);
    assert.match(result.message, notSent);
  });

  test('an invalid answer or a guardrail rejection too long to replay: one request, the failure kind kept', async () => {
    handlers = [writes({ name: 5, note: pad }), answer()];
    const invalid = await client().structured(long);
    assert.ok(!invalid.ok && invalid.kind === 'invalid', JSON.stringify(invalid).slice(0, 500));
    assert.equal(bodies.length, 1);
    assert.match(invalid.message, notSent);
    bodies = [];
    handlers = [writes({ name: pad }), answer()];
    const rejected = await client().structured({ ...long, guardrails: [(value) => (value.name === 'Ada' ? undefined : 'not Ada')] });
    assert.ok(!rejected.ok && rejected.kind === 'rejected', JSON.stringify(rejected).slice(0, 500));
    assert.equal(bodies.length, 1);
    assert.match(rejected.message, notSent);
  });
});

describe('a tool input that is not an object', () => {
  const writes = (json: string): Handler => (response) => {
    openStream(response);
    response.end(start() + toolBlock(json) + finish('tool_use', 20, 3));
  };

  test('is an invalid outcome, "/ must be object", with or without the envelope, after its one retry; usage and request ids are kept', async () => {
    for (const insufficientData of [false, true]) {
      for (const json of ['null', '"Ada"', '[1]']) {
        bodies = [];
        handlers = [writes(json)];
        const result = await client().structured({ ...ask, insufficientData });
        assert.ok(!result.ok && result.kind === 'invalid', `${json}, envelope ${insufficientData}: ${JSON.stringify(result)}`);
        assert.equal(result.violation, '/ must be object');
        assert.deepEqual(result.input, JSON.parse(json));
        assert.match(result.message, /after the one retry$/);
        assert.equal(bodies.length, 2, `${json}, envelope ${insufficientData}: the retry is sent`);
        assert.equal(result.attempts, 2);
        assert.deepEqual(result.requestIds, ['req_1', 'req_2']);
        assert.ok(result.usage.inputTokens >= 40, JSON.stringify(result.usage));
      }
    }
  });

  test('is retried once, replayed as {} with the value it wrote quoted in the error result; a valid second answer is used', async () => {
    for (const json of ['null', '"Ada"', '[1]']) {
      bodies = [];
      handlers = [writes(json), answer()];
      const result = await client().structured(ask);
      assert.ok(result.ok, `${json}: ${JSON.stringify(result)}`);
      assert.deepEqual(result.value, { name: 'Ada' });
      assert.equal(bodies.length, 2, json);
      const [call, reply] = (bodies[1]!.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>).slice(-2);
      assert.deepEqual(call?.content[0], { type: 'tool_use', id: 'toolu_1', name: 'record_answer', input: {} });
      assert.equal(reply?.content[0]?.is_error, true);
      assert.ok(String(reply?.content[0]?.content).includes(`The input you wrote was ${json}, not an object`), String(reply?.content[0]?.content));
    }
  });
});
