/**
 * OpenTelemetry spans, read from an in-memory exporter: one server span per request, with a
 * child span per engine call (each backend step of the turn, and the prompt's token count),
 * described by the GenAI conventions; an error status on a failed request (5xx: a 4xx is the
 * client's failure and leaves it unset). And `mms serve` starts the SDK when OTEL_* variables
 * ask for traces.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { postJson, readSse, scriptedModels, startService, type RunningService } from '@model-messages/testing';
import { tracingRequested } from '../packages/server/src/cli/tracing-setup.js';
import { MMS } from './mms-command.js';

const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));

let service: RunningService;
before(async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-tracing-'));
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
  service = await startService({ models: scriptedModels({ script: 'script.json', faults: true }) }, folder);
});
after(() => service.close());
beforeEach(() => exporter.reset());

/** The request's span and its children, once the request span has ended (a stream's ends after its last event). */
async function spansOf(response: Response): Promise<{ request: ReadableSpan; children: ReadableSpan[] }> {
  const requestId = response.headers.get('request-id');
  for (let waited = 0; waited < 5_000; waited += 10) {
    const spans = exporter.getFinishedSpans();
    const request = spans.find((span) => span.attributes['mms.request_id'] === requestId);
    if (request) {
      const children = spans.filter((span) => span.parentSpanContext?.spanId === request.spanContext().spanId);
      return { request, children };
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no span for ${requestId}`);
}

test('a request with a server tool: one server span, a count_tokens span and a chat span per step, with the GenAI attributes', async () => {
  const response = await postJson(service, '/v1/messages', {
    model: 'mid',
    max_tokens: 200,
    stream: true,
    tools: [{ type: 'web_search_20260209', name: 'web_search' }],
    messages: [{ role: 'user', content: 'search the weather' }],
  });
  const events = await readSse(response);
  const delta = events.find((event) => event.event === 'message_delta')?.data as unknown as {
    usage: { input_tokens: number; output_tokens: number };
  };
  const { request, children } = await spansOf(response);
  assert.equal(request.name, 'POST /v1/messages');
  assert.equal(request.kind, SpanKind.SERVER);
  assert.equal(request.status.code, SpanStatusCode.UNSET);
  assert.deepEqual(
    {
      operation: request.attributes['gen_ai.operation.name'],
      requestModel: request.attributes['gen_ai.request.model'],
      responseModel: request.attributes['gen_ai.response.model'],
      maxTokens: request.attributes['gen_ai.request.max_tokens'],
      inputTokens: request.attributes['gen_ai.usage.input_tokens'],
      outputTokens: request.attributes['gen_ai.usage.output_tokens'],
      finishReasons: request.attributes['gen_ai.response.finish_reasons'],
      route: request.attributes['http.route'],
      status: request.attributes['http.response.status_code'],
      streamed: request.attributes['mms.streamed'],
    },
    {
      operation: 'chat',
      requestModel: 'mid',
      responseModel: 'mid-newer',
      maxTokens: 200,
      inputTokens: delta.usage.input_tokens,
      outputTokens: delta.usage.output_tokens,
      finishReasons: ['end_turn'],
      route: '/v1/messages',
      status: 200,
      streamed: true,
    },
  );
  assert.match(String(request.attributes['mms.key_id']), /^key-[0-9a-f]{8}$/);

  const counts = children.filter((span) => span.name === 'count_tokens mid-newer');
  assert.equal(counts.length, 1);
  assert.equal(counts[0]!.attributes['gen_ai.usage.input_tokens'], delta.usage.input_tokens);
  const steps = children.filter((span) => span.name === 'chat mid-newer');
  assert.equal(steps.length, 2, 'a step for the search call, a step for the answer');
  for (const [index, step] of steps.entries()) {
    assert.equal(step.kind, SpanKind.CLIENT);
    assert.equal(step.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(step.attributes['gen_ai.request.model'], 'mid-newer');
    assert.equal(step.attributes['gen_ai.provider.name'], 'mms.scripted');
    assert.equal(step.attributes['mms.step'], index);
    assert.equal(typeof step.attributes['gen_ai.request.max_tokens'], 'number');
    assert.equal(typeof step.attributes['gen_ai.usage.output_tokens'], 'number');
  }
  assert.deepEqual(
    steps.map((step) => step.attributes['gen_ai.response.finish_reasons']),
    [['tool_use'], ['end_turn']],
  );
  assert.equal(steps[0]!.attributes['gen_ai.usage.input_tokens'], delta.usage.input_tokens, 'the first step only');
  assert.equal(steps[1]!.attributes['gen_ai.usage.input_tokens'], undefined);
  assert.equal(
    steps.reduce((sum, step) => sum + Number(step.attributes['gen_ai.usage.output_tokens']), 0),
    delta.usage.output_tokens,
  );
});

test('a failed request: error status on its span and on the engine call that failed', async () => {
  const response = await postJson(
    service,
    '/v1/messages',
    { model: 'mid', max_tokens: 50, messages: [{ role: 'user', content: 'Hello' }] },
    { 'mms-fault': 'http-500' },
  );
  assert.equal(response.status, 500);
  const { request, children } = await spansOf(response);
  assert.equal(request.status.code, SpanStatusCode.ERROR);
  assert.equal(request.attributes['error.type'], 'internal');
  assert.equal(request.attributes['http.response.status_code'], 500);
  const step = children.find((span) => span.name === 'chat mid-newer');
  assert.equal(step?.status.code, SpanStatusCode.ERROR);
  assert.equal(step?.attributes['error.type'], 'internal');
});

test("a client's error (404) names its type and leaves the status unset; the span names no path it did not route", async () => {
  const response = await postJson(service, '/v1/messages', {
    model: 'no-such-model',
    max_tokens: 50,
    messages: [{ role: 'user', content: 'Hello' }],
  });
  assert.equal(response.status, 404);
  const { request, children } = await spansOf(response);
  assert.equal(request.status.code, SpanStatusCode.UNSET);
  assert.equal(request.attributes['error.type'], 'not_found');
  assert.deepEqual(children, []);
  const unknown = await fetch(`${service.baseURL}/secret/path`, { headers: service.headers });
  assert.equal((await spansOf(unknown)).request.name, 'GET');
});

test('OTEL_* variables that ask for traces: an exporter other than none, or an OTLP endpoint', () => {
  assert.equal(tracingRequested({}), false);
  assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' }), true);
  assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), false);
  assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
  assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true);
  assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }), false);
});

test('mms serve with OTEL_TRACES_EXPORTER=console exports the spans of its requests', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-tracing-cli-'));
  const config = join(folder, 'config.json');
  const key = 'tracing-test-key-1';
  writeFileSync(config, JSON.stringify({ apiKeys: [key], models: scriptedModels(), listen: { port: 0 } }));
  const child = spawn(process.execPath, [...MMS, 'serve', '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MMS_DATA_FOLDER: folder, OTEL_TRACES_EXPORTER: 'console', OTEL_SERVICE_NAME: 'mms-test' },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  try {
    let port: string | undefined;
    for (let waited = 0; port === undefined && waited < 30_000; waited += 50) {
      port = output.match(/listening at http:\/\/127\.0\.0\.1:(\d+)/)?.[1];
      if (port === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(port, `mms did not listen: ${output}`);
    const response = await fetch(`http://127.0.0.1:${port}/v1/models`, {
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    });
    assert.equal(response.status, 200);
  } finally {
    child.kill('SIGTERM');
  }
  assert.deepEqual(await once(child, 'exit'), [0, null]);
  // The console exporter prints each span as an object; the SDK's shutdown flushed it.
  assert.match(output, /name: 'GET \/v1\/models'/);
  assert.match(output, /'http\.route': '\/v1\/models'/);
});
