/**
 * OpenTelemetry spans through `@opentelemetry/api` alone: one span per request, and under it one
 * per engine call (each backend step of the turn, and the prompt's token count), named and
 * described by the GenAI semantic conventions (`chat <model>`, `gen_ai.*` attributes). Without
 * an SDK (cli/tracing-setup.ts starts one when OTEL_* variables ask for it) every span is the
 * API's no-op: a request pays for one span object, and no engine-call span is made at all.
 *
 * Spans carry names, counts and codes, never request or response text, and an error's code
 * rather than its message (which can quote the request).
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import { ServiceError, type StopReason } from '@model-messages/protocol';
import type { Backend } from '../backends/backend.js';
import type { ModelCall } from '../backends/call/model-call.js';
import { RequestRecord } from './request-record.js';

/** The tracer of the service's own spans; a proxy, so an SDK started later still receives them. */
const tracer = trace.getTracer('@model-messages/server');

/**
 * A request's record with its span started. The span continues a trace the client started
 * (`traceparent`), where the SDK's propagator reads one.
 */
export function startRequest(requestId: string, method: string, headers: IncomingHttpHeaders): RequestRecord {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer.startSpan(method, { kind: SpanKind.SERVER }, parent);
  // A span that no SDK made has no valid context: its children are not made either.
  const context = isSpanContextValid(span.spanContext()) ? trace.setSpan(parent, span) : undefined;
  return new RequestRecord(requestId, method, span, context);
}

/** Ends the request's span with what the record says (request-observer.ts, once per request). */
export function endRequestSpan(record: RequestRecord): void {
  const span = record.span;
  if (span.isRecording()) {
    if (record.route !== undefined) span.updateName(`${record.method} ${record.route}`);
    const attributes: Attributes = {
      'http.request.method': record.method,
      'http.response.status_code': record.status,
      'mms.request_id': record.requestId,
    };
    if (record.route !== undefined) attributes['http.route'] = record.route;
    if (record.keyId !== undefined) attributes['mms.key_id'] = record.keyId;
    if (record.disconnected) attributes['mms.client_disconnected'] = true;
    if (record.requestedModel !== undefined) {
      attributes['gen_ai.operation.name'] = record.route === MESSAGES_ROUTE ? 'chat' : 'count_tokens';
      attributes['gen_ai.request.model'] = record.requestedModel;
    }
    if (record.model !== undefined) attributes['gen_ai.response.model'] = record.model;
    if (record.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = record.maxTokens;
    if (record.inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = record.inputTokens;
    if (record.outputTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = record.outputTokens;
    if (record.cacheReadInputTokens) attributes['gen_ai.usage.cache_read.input_tokens'] = record.cacheReadInputTokens;
    if (record.cacheCreationInputTokens)
      attributes['gen_ai.usage.cache_creation.input_tokens'] = record.cacheCreationInputTokens;
    if (record.stopReason) attributes['gen_ai.response.finish_reasons'] = [record.stopReason];
    if (record.backend !== undefined) attributes['mms.backend'] = record.backend;
    if (record.route === MESSAGES_ROUTE) attributes['mms.streamed'] = record.streamed;
    span.setAttributes(attributes);
    if (record.errorCode !== undefined) {
      span.setAttribute('error.type', record.errorCode);
      // As the HTTP conventions have it for a server: a 4xx is the client's failure, not the service's.
      if ((record.errorStatus ?? 500) >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: record.errorCode });
    }
  }
  span.end();
}

const MESSAGES_ROUTE = '/v1/messages';

/**
 * A span for one backend step of the turn (agent/run-turn.ts), or undefined when the request is
 * not traced. `inputTokens`: the prompt's count, for the first step (later steps' prompts hold
 * the turn's own output too, which no count was made of).
 */
export function startEngineSpan(
  record: RequestRecord | undefined,
  model: string,
  call: ModelCall,
  inputTokens: number | undefined,
): Span | undefined {
  if (record?.traceContext === undefined) return undefined;
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': model,
    'gen_ai.request.max_tokens': call.outputBudget,
    'mms.step': call.step,
  };
  if (inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = inputTokens;
  return tracer.startSpan(`chat ${model}`, { kind: SpanKind.CLIENT, attributes }, record.traceContext);
}

/** Ends a step's span: the backend that answered (known only now for a fallback list), its finish and tokens. */
export function endEngineSpan(
  span: Span,
  backend: Backend,
  model: string,
  stopReason: StopReason | undefined,
  outputTokens: number,
  error: unknown,
): void {
  span.setAttributes({
    'gen_ai.provider.name': backend.telemetryName ?? backend.name,
    'gen_ai.response.model': model,
    'gen_ai.usage.output_tokens': outputTokens,
    'mms.backend': backend.name,
  });
  if (stopReason !== undefined) span.setAttribute('gen_ai.response.finish_reasons', [stopReason]);
  if (error !== undefined) failSpan(span, error);
  span.end();
}

/**
 * The prompt's token count by the backend, in a span of its own when the request is traced.
 * Untraced, the count's own promise is returned: no async function's promise around it, which
 * would cost every request one more turn of the microtask queue.
 */
export function traceTokenCount(
  record: RequestRecord,
  backend: Backend,
  model: string,
  count: () => Promise<number>,
): Promise<number> {
  return record.traceContext === undefined ? count() : tracedTokenCount(record, backend, model, count);
}

async function tracedTokenCount(
  record: RequestRecord,
  backend: Backend,
  model: string,
  count: () => Promise<number>,
): Promise<number> {
  const span = tracer.startSpan(
    `count_tokens ${model}`,
    { kind: SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'count_tokens', 'gen_ai.request.model': model } },
    record.traceContext!,
  );
  try {
    const tokens = await count();
    span.setAttribute('gen_ai.usage.input_tokens', tokens);
    return tokens;
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.setAttributes({ 'gen_ai.provider.name': backend.telemetryName ?? backend.name, 'mms.backend': backend.name });
    span.end();
  }
}

function failSpan(span: Span, error: unknown): void {
  const code = error instanceof ServiceError ? error.code : 'internal';
  span.setAttribute('error.type', code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}
