/**
 * `GET /metrics`, the Prometheus text: behind the /v1 keys unless `metrics.public`; requests by
 * route, model, backend, status and code; the duration and first-token histograms; tokens;
 * 529s, queue depth and requests in flight per model; circuits and fallbacks; server tool calls
 * by outcome; regenerations of output that failed its schema; model load time; and the
 * process's own metrics.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FakeOpenAiEngine,
  postJson,
  readSse,
  readStreamUntil,
  startService,
  tinyLlamaModel,
  type RunningService,
} from '@model-messages/testing';

const CITY_FORMAT = {
  type: 'object',
  properties: { city: { type: 'string' }, country: { type: 'string' } },
  required: ['city', 'country'],
  additionalProperties: false,
};

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseMetrics(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = line.match(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/);
      assert.ok(match, `not a sample line: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1]!, pair[2]!]),
      );
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The value of the one sample with this name whose labels include `labels`; 0 when there is none. */
function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
  );
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

async function scrape(service: RunningService, headers = service.headers): Promise<Sample[]> {
  const response = await fetch(`${service.baseURL}/metrics`, { headers });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return parseMetrics(await response.text());
}

const model = (id: string, backend: Record<string, unknown>) => ({
  id,
  tier: 'mid' as const,
  generation: 'newer' as const,
  contextWindow: 4096,
  maxOutputTokens: 1024,
  backend: { type: 'scripted' as const, ...backend },
});

describe('metrics of requests on scripted models', () => {
  let service: RunningService;
  before(async () => {
    const folder = mkdtempSync(join(tmpdir(), 'mms-metrics-'));
    writeFileSync(
      join(folder, 'script.json'),
      JSON.stringify([
        {
          when: 'search',
          steps: [
            [{ type: 'server_tool_use', name: 'web_search', input: { query: 'weather' } }],
            [{ type: 'text', text: 'Nothing found.' }],
          ],
        },
      ]),
    );
    service = await startService(
      {
        models: [
          model('mid', { script: 'script.json', faults: true }),
          model('slow', { tokenDelayMs: 20, concurrency: 1, queue: 1 }),
          {
            ...model('listed', {}),
            backend: undefined,
            backends: [
              { type: 'scripted', faults: true },
              { type: 'scripted', script: 'script.json' },
            ],
            fallback: { failureThreshold: 1, cooldownMs: 600_000 },
          },
        ],
      },
      folder,
    );
  });
  after(() => service.close());

  test('/metrics needs a key, as /v1 does', async () => {
    const response = await fetch(`${service.baseURL}/metrics`);
    assert.equal(response.status, 401);
  });

  test('requests by route, model, backend, status and code; durations, first tokens, tokens and 529s', async () => {
    const before = await scrape(service);
    const replies = [];
    for (const stream of [false, true]) {
      const response = await postJson(service, '/v1/messages', {
        model: 'mid',
        max_tokens: 100,
        stream,
        messages: [{ role: 'user', content: 'Count these words please.' }],
      });
      replies.push(stream ? (await readSse(response)).at(-2)?.data : await response.json());
    }
    const usages = replies.map((reply) => (reply as { usage: { input_tokens: number; output_tokens: number } }).usage);
    const overloaded = await postJson(
      service,
      '/v1/messages',
      { model: 'mid', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] },
      { 'mms-fault': 'http-529' },
    );
    assert.equal(overloaded.status, 529);
    const after = await scrape(service);
    const grew = (name: string, labels: Record<string, string> = {}) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);

    const ok = { route: '/v1/messages', model: 'mid', backend: 'scripted', status: '200', code: '' };
    assert.equal(grew('mms_requests_total', ok), 2);
    assert.equal(grew('mms_requests_total', { ...ok, status: '529', code: 'overloaded' }), 1);
    assert.equal(grew('mms_overloaded_total', { model: 'mid' }), 1);
    assert.equal(
      grew('mms_input_tokens_total', { model: 'mid', backend: 'scripted' }),
      usages[0]!.input_tokens + usages[1]!.input_tokens,
    );
    assert.equal(
      grew('mms_output_tokens_total', { model: 'mid', backend: 'scripted' }),
      usages[0]!.output_tokens + usages[1]!.output_tokens,
    );
    assert.equal(grew('mms_request_duration_seconds_count', { route: '/v1/messages', model: 'mid' }), 3);
    assert.equal(grew('mms_request_duration_seconds_bucket', { route: '/v1/messages', model: 'mid', le: '+Inf' }), 3);
    assert.equal(grew('mms_time_to_first_token_seconds_count', { model: 'mid', backend: 'scripted' }), 2);
    assert.ok(valueOf(after, 'mms_time_to_first_token_seconds_sum', { model: 'mid', backend: 'scripted' }) > 0);
    // The scrape before counts too, with no model (a scrape is counted once its text is made).
    assert.ok(valueOf(after, 'mms_requests_total', { route: '/metrics', status: '200', model: '' }) >= 1);
    assert.ok(valueOf(after, 'process_cpu_user_seconds_total') > 0, "the process's own metrics");
    assert.ok(after.some((sample) => sample.name === 'nodejs_eventloop_lag_seconds'));
  });

  test('queue depth and requests in flight per model, read when scraped', async () => {
    const stream = (content: string) =>
      postJson(service, '/v1/messages', {
        model: 'slow',
        max_tokens: 200,
        stream: true,
        messages: [{ role: 'user', content }],
      });
    // Concurrency 1, queue 1: the first generates, the second waits, the third is refused.
    const generating = await stream('word '.repeat(60));
    const generatingReader = generating.body!.getReader();
    await readStreamUntil(generatingReader, /content_block_delta/);
    const queued = await stream('queued');
    const queuedReader = queued.body!.getReader();
    await readStreamUntil(queuedReader, /message_start/);
    const refused = await stream('refused');
    assert.equal(refused.status, 529);
    const during = await scrape(service);
    assert.equal(valueOf(during, 'mms_requests_in_flight', { model: 'slow' }), 1);
    assert.equal(valueOf(during, 'mms_queue_depth', { model: 'slow' }), 1);
    assert.equal(valueOf(during, 'mms_queue_depth', { model: 'mid' }), 0);
    assert.ok(valueOf(during, 'mms_overloaded_total', { model: 'slow' }) >= 1);
    await generatingReader.cancel();
    await queuedReader.cancel();
  });

  test("a fallback list's circuits and fallbacks, and server tool calls by outcome", async () => {
    const failing = await postJson(
      service,
      '/v1/messages',
      {
        model: 'listed',
        max_tokens: 100,
        tools: [{ type: 'web_search_20260209', name: 'web_search' }],
        messages: [{ role: 'user', content: 'search the weather' }],
      },
      { 'mms-fault': 'http-500' },
    );
    assert.equal(failing.status, 200, await failing.clone().text());
    assert.equal(failing.headers.get('mms-backend'), 'scripted#2');
    const samples = await scrape(service);
    const primary = { model: 'listed', backend: 'scripted#1' };
    assert.equal(valueOf(samples, 'mms_circuit_state', { ...primary, state: 'open' }), 1);
    assert.equal(valueOf(samples, 'mms_circuit_state', { ...primary, state: 'closed' }), 0);
    assert.equal(valueOf(samples, 'mms_circuit_state', { model: 'listed', backend: 'scripted#2', state: 'closed' }), 1);
    assert.equal(valueOf(samples, 'mms_circuit_changes_total', { ...primary, state: 'open' }), 1);
    assert.equal(
      valueOf(samples, 'mms_fallbacks_total', { ...primary, phase: 'generate', code: 'internal' }),
      1,
      'moved on from the primary',
    );
    // No search provider is configured: the call is answered `unavailable`.
    assert.equal(valueOf(samples, 'mms_server_tool_calls_total', { tool: 'web_search', outcome: 'unavailable' }), 1);
    assert.equal(
      valueOf(samples, 'mms_requests_total', {
        route: '/v1/messages',
        model: 'listed',
        backend: 'scripted#2',
        status: '200',
      }),
      1,
    );
  });

  test('each backend of a list: requests chosen, passed over, failed and in flight (issue 36)', async () => {
    // The primary's circuit opened in the test before: this request passes over it.
    const response = await postJson(service, '/v1/messages', {
      model: 'listed',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello' }],
    });
    assert.equal(response.headers.get('mms-backend'), 'scripted#2');
    const samples = await scrape(service);
    const primary = { model: 'listed', backend: 'scripted#1' };
    const fallback = { model: 'listed', backend: 'scripted#2' };
    assert.equal(valueOf(samples, 'mms_backend_chosen_total', primary), 1);
    assert.equal(valueOf(samples, 'mms_backend_chosen_total', fallback), 2);
    assert.equal(valueOf(samples, 'mms_backend_skipped_total', { ...primary, reason: 'open' }), 1);
    assert.equal(valueOf(samples, 'mms_backend_skipped_total', { ...primary, reason: 'down' }), 0);
    assert.equal(valueOf(samples, 'mms_backend_skipped_total', { ...fallback, reason: 'open' }), 0);
    assert.equal(valueOf(samples, 'mms_backend_failures_total', { ...primary, code: 'internal' }), 1);
    assert.equal(valueOf(samples, 'mms_backend_failures_total', { ...fallback, code: 'internal' }), 0);
    assert.equal(valueOf(samples, 'mms_backend_in_flight', primary), 0);
    assert.equal(valueOf(samples, 'mms_backend_in_flight', fallback), 0);
  });
});

test('with metrics.public, /metrics needs no key', async () => {
  const service = await startService({ metrics: { public: true } });
  try {
    const samples = await scrape(service, {});
    assert.ok(samples.some((sample) => sample.name === 'mms_queue_depth'));
  } finally {
    await service.close();
  }
});

test('regenerations of output that failed its schema, by model, backend and output', async () => {
  const engine = await FakeOpenAiEngine.start('generic');
  const service = await startService({
    models: [
      {
        id: 'engine',
        tier: 'mid',
        generation: 'newer',
        contextWindow: 8192,
        maxOutputTokens: 4096,
        backend: { type: 'openai-compatible', engine: 'generic', baseURL: engine.baseURL, model: engine.model },
      },
    ],
  });
  try {
    engine.reply({ fixture: 'format-invalid' }, { fixture: 'format-valid' });
    const response = await postJson(service, '/v1/messages', {
      model: 'engine',
      max_tokens: 100,
      output_config: { format: { type: 'json_schema', schema: CITY_FORMAT } },
      messages: [{ role: 'user', content: 'City?' }],
    });
    assert.equal(response.status, 200);
    const samples = await scrape(service);
    const labels = { model: 'engine', backend: 'openai-compatible:generic', output: 'format_answer' };
    assert.equal(valueOf(samples, 'mms_output_regenerations_total', labels), 1);
  } finally {
    await service.close();
    await engine.close();
  }
});

test("an embedded model's load time", async () => {
  const service = await startService({
    models: [
      {
        id: 'tiny',
        tier: 'mid',
        generation: 'newer',
        contextWindow: 1024,
        maxOutputTokens: 1024,
        // The tiny model's template is ChatML, which "auto" finds by rendering test conversations
        // through it for each candidate wrapper (a second or more of CPU at every load): named here.
        backend: { type: 'llama-cpp', model: await tinyLlamaModel(), threads: 1, chatWrapper: 'chatML' },
      },
    ],
  });
  try {
    const response = await postJson(service, '/v1/messages', {
      model: 'tiny',
      max_tokens: 4,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    assert.equal(response.status, 200);
    const samples = await scrape(service);
    assert.equal(valueOf(samples, 'mms_model_load_seconds_count', { model: 'tiny', backend: 'llama-cpp' }), 1);
    assert.ok(valueOf(samples, 'mms_model_load_seconds_sum', { model: 'tiny', backend: 'llama-cpp' }) > 0);
  } finally {
    await service.close();
  }
});
