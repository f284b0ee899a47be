/** Admission control per backend, and cancellation when the client goes away. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { postJson, scriptedModels, startService, type RunningService } from '@mms/testing';

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
    const started = Date.now();
    const refused = await postJson(service, '/v1/messages', slowRequest);
    const elapsed = Date.now() - started;
    assert.equal(refused.status, 529);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(((await refused.json()) as { error: { type: string } }).error.type, 'overloaded_error');
    assert.ok(elapsed < 1000, `refusal took ${elapsed} ms`);
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
