/**
 * Admission control per backend, the stream that opens at admission (docs/decisions/0015), and
 * cancellation when the client goes away.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  parseSse,
  postJson,
  readStreamUntil,
  scriptedModels,
  startService,
  type RunningService,
} from '@model-messages/testing';

let service: RunningService;
before(async () => {
  // 20 ms a token: the 200-word prompt below would take 4 s to echo in full.
  service = await startService({ models: scriptedModels({ tokenDelayMs: 20, concurrency: 1, queue: 1 }) });
});
after(() => service.close());

const longText = Array.from({ length: 200 }, (_, index) => `word${index}`).join(' ');
const slowRequest = { model: 'mid', max_tokens: 1000, messages: [{ role: 'user', content: longText }] };

function stats() {
  return service.registry.resolve('mid').admission.stats;
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(10);
  }
  return Date.now() - started;
}

describe('admission control', () => {
  test('past the concurrency limit and the queue, the answer is 529 at once with retry-after', async () => {
    const active = startAbortable(slowRequest);
    await waitFor(() => stats().active === 1, 2000);
    const queued = startAbortable(slowRequest);
    await waitFor(() => stats().queued === 1, 2000);
    const refused = await postJson(service, '/v1/messages', slowRequest);
    // At once: the refusal came while the slot and the queue were still held (the active request
    // generates for 20 s), not when one of them let go. A clock would fail on a busy machine.
    assert.deepEqual({ active: stats().active, queued: stats().queued }, { active: 1, queued: 1 });
    assert.equal(refused.status, 529);
    // The public API's status line, which node:http would write as `529 unknown` (issue 32).
    assert.equal(refused.statusText, 'Overloaded');
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(((await refused.json()) as { error: { type: string } }).error.type, 'overloaded_error');
    active.abort();
    queued.abort();
    await waitFor(() => stats().active === 0 && stats().queued === 0, 2000);
  });
});

/** Sends `body` and returns a handle that gives up on it. */
function startAbortable(body: unknown): { abort: () => void } {
  const controller = new AbortController();
  fetch(`${service.baseURL}/v1/messages`, {
    method: 'POST',
    headers: service.headers,
    body: JSON.stringify(body),
    signal: controller.signal,
  }).catch(() => undefined);
  return { abort: () => controller.abort() };
}

function streamRequest(body: unknown, signal?: AbortSignal): Promise<Response> {
  return streamRequestTo(service, body, signal);
}

function streamRequestTo(to: RunningService, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${to.baseURL}/v1/messages`, {
    method: 'POST',
    headers: to.headers,
    body: JSON.stringify({ ...(body as object), stream: true }),
    signal,
  });
}

describe('a stream opens at admission', () => {
  const shortRequest = { model: 'mid', max_tokens: 20, messages: [{ role: 'user', content: 'Queued, then quick.' }] };

  test('a queued stream gets its headers, message_start and a ping while it waits, then its reply', async () => {
    const active = startAbortable(slowRequest);
    await waitFor(() => stats().active === 1, 2000);
    const response = await streamRequest(shortRequest);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('request-id') ?? '', /^req_/);
    assert.equal(response.headers.get('mms-backend'), 'scripted');
    const reader = response.body!.getReader();
    const opening = await readStreamUntil(reader, /event: ping\n/);
    // Still queued behind the slow request: what arrived came before any slot or output.
    assert.deepEqual(stats(), { active: 1, queued: 1 });
    assert.deepEqual(
      parseSse(opening).map((event) => event.event),
      ['message_start', 'ping'],
    );
    const start = parseSse(opening)[0]?.data as unknown as { message: { usage: { input_tokens: number } } };
    assert.ok(start.message.usage.input_tokens > 0);
    active.abort();
    const rest = await readStreamUntil(reader, /event: message_stop\n/);
    const names = parseSse(rest).map((event) => event.event);
    assert.equal(names[0], 'content_block_start');
    assert.equal(names.at(-1), 'message_stop');
    assert.ok(!names.includes('message_start'), 'message_start is sent once');
    await waitFor(() => stats().active === 0 && stats().queued === 0, 2000);
  });

  test('a client that leaves while queued leaves the queue and never holds a slot', async () => {
    const active = startAbortable(slowRequest);
    await waitFor(() => stats().active === 1, 2000);
    const controller = new AbortController();
    const response = await streamRequest(shortRequest, controller.signal);
    await readStreamUntil(response.body!.getReader(), /event: ping\n/);
    assert.deepEqual(stats(), { active: 1, queued: 1 });
    controller.abort();
    await waitFor(() => stats().queued === 0, 2000);
    assert.equal(stats().active, 1);
    // The place it left is free: another request queues in it rather than getting a 529.
    const next = startAbortable(slowRequest);
    await waitFor(() => stats().queued === 1, 2000);
    active.abort();
    next.abort();
    await waitFor(() => stats().active === 0 && stats().queued === 0, 2000);
  });

  test('a stream that waits in the queue gets a ping every pingIntervalMs until its turn', async () => {
    // The public API pings a quiet stream; a client's idle timer sees the queue wait as alive.
    const pinging = await startService({
      pingIntervalMs: 100,
      models: scriptedModels({ tokenDelayMs: 20, concurrency: 1, queue: 1 }),
    });
    try {
      const active = await streamRequestTo(pinging, slowRequest);
      const activeReader = active.body!.getReader();
      await readStreamUntil(activeReader, /content_block_delta/);
      const queued = await streamRequestTo(pinging, shortRequest);
      const reader = queued.body!.getReader();
      const waiting = await readStreamUntil(reader, /(event: ping\n[^]*){3}/);
      assert.deepEqual(
        parseSse(waiting).map((event) => event.event),
        ['message_start', 'ping', 'ping', 'ping'],
      );
      assert.equal(pinging.registry.resolve('mid').admission.stats.queued, 1);
      await activeReader.cancel();
      await readStreamUntil(reader, /event: message_stop\n/);
    } finally {
      await pinging.close();
    }
  });

  test('a full queue is still a 529 status for a stream: it was never admitted', async () => {
    const active = startAbortable(slowRequest);
    await waitFor(() => stats().active === 1, 2000);
    const queued = startAbortable(slowRequest);
    await waitFor(() => stats().queued === 1, 2000);
    const refused = await postJson(service, '/v1/messages', { ...shortRequest, stream: true });
    assert.equal(refused.status, 529);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.match(refused.headers.get('content-type') ?? '', /application\/json/);
    active.abort();
    queued.abort();
    await waitFor(() => stats().active === 0 && stats().queued === 0, 2000);
  });
});

describe('client disconnect', () => {
  test('closing a stream mid-generation stops it and frees the slot', async () => {
    const controller = new AbortController();
    const response = await fetch(`${service.baseURL}/v1/messages`, {
      method: 'POST',
      headers: service.headers,
      body: JSON.stringify({ ...slowRequest, stream: true }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    const firstChunk = await reader.read();
    assert.match(new TextDecoder().decode(firstChunk.value), /message_start/);
    assert.equal(stats().active, 1);
    controller.abort();
    // The full echo would take ~4 s; a stopped generation frees its slot within a few tokens.
    const freedAfter = await waitFor(() => stats().active === 0, 2000);
    assert.ok(freedAfter < 2000);
  });

  test('a client that gives up on a JSON request stops its generation too', async () => {
    const controller = new AbortController();
    const pending = fetch(`${service.baseURL}/v1/messages`, {
      method: 'POST',
      headers: service.headers,
      body: JSON.stringify(slowRequest),
      signal: controller.signal,
    }).catch((error: Error) => error.name);
    await waitFor(() => stats().active === 1, 2000);
    controller.abort();
    assert.equal(await pending, 'AbortError');
    await waitFor(() => stats().active === 0, 2000);
  });
});
