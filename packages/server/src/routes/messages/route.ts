/** HTTP glue for `POST /v1/messages`: JSON reply or SSE stream over one event source. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamEvent } from '@model-messages/protocol';
import type { ConnectionClosing } from '../../http/connection-closing.js';
import { Cancellation } from '../../backends/cancellation.js';
import { errorReply, type ErrorReply } from '../../http/error-reply.js';
import { ignoredFieldsHeader } from '../../http/ignored-fields-header.js';
import type { ReplyRedaction } from '../../http/reply-redaction.js';
import { readJsonBody } from '../../http/request-body.js';
import { WRITTEN, type RouteContext, type Router } from '../../http/router.js';
import { SseWriter } from '../../http/sse-writer.js';
import { WriteDeadline } from '../../http/write-deadline.js';
import type { KeyLimiter } from '../../limits/key-limiter.js';
import type { RequestRecord } from '../../observability/request-record.js';
import { MessageFold } from '../../streaming/message-fold.js';
import { SESSION_HEADER } from '../../call-builder/conversation-key.js';
import { startMessage, type MessageCall, type MessageServices } from './handler.js';

/** How replies are written: the app's settings and its closing state. */
export interface ReplyOptions {
  pingIntervalMs: number;
  /** listen.writeTimeoutMs (http/write-deadline.ts). */
  writeTimeoutMs: number;
  closing: ConnectionClosing;
  /** Takes configured secrets and addresses out of an `event: error` (http/reply-redaction.ts). */
  redaction: ReplyRedaction;
  /** Told of a stream cut off by its write deadline, for the log. */
  onCut?: (requestId: string) => void;
}

export function registerMessagesRoute(
  router: Router,
  services: MessageServices,
  limiter: KeyLimiter,
  options: ReplyOptions,
): void {
  router.post('/v1/messages', async (context) => {
    // Every /v1 route is behind the key check (app.ts).
    const key = context.key!;
    // The request counts against its key's requests in flight from here, before its body is read.
    const limitCharge = limiter.enter(key);
    let outputTokens = 0;
    try {
      const cancellation = abortOnDisconnect(context.response);
      const body = await readJsonBody(context.request, context.bodyMemory);
      // Resolves once the request is admitted (a slot, or a place in the queue); anything it
      // throws is an HTTP status, streamed or not.
      const call = await startMessage(
        body,
        {
          fault: headerValue(context.request, 'mms-fault'),
          sessionId: headerValue(context.request, SESSION_HEADER),
        },
        services,
        cancellation,
        key,
        limitCharge,
        context.record,
      );
      try {
        if (!call.stream) {
          // The JSON reply is the fold of the very events a stream would write. Nothing is written
          // before the last of them, so its failures are HTTP statuses wherever they happen.
          const fold = new MessageFold();
          for (let next = await call.events.next(); !next.done; next = await call.events.next())
            for (const event of next.value) fold.apply(event);
          return { body: fold.result(), headers: replyHeaders(call) };
        }
        const deadline = new WriteDeadline(context.response, context.requestId, options.writeTimeoutMs, options.onCut);
        await streamReply(
          context,
          call,
          new SseWriter(context.response, options.pingIntervalMs, options.closing, deadline),
          options.redaction,
        );
        return WRITTEN;
      } finally {
        outputTokens = recordOutcome(context.record, call);
      }
    } finally {
      // However the request ended: its place in flight goes back, and it pays what it generated
      // (a stream cut short included; nothing when it was refused before generating).
      limitCharge?.settle(outputTokens);
    }
  });
}

/**
 * What the turn came to, however it ended, for the access log and the metrics (observability/);
 * answers the output tokens it generated, for the key's limits.
 */
function recordOutcome(record: RequestRecord, call: MessageCall): number {
  const summary = call.events.summary();
  record.streamed = call.stream;
  record.backend = call.backendName();
  record.stopReason = summary.stopReason;
  record.inputTokens = summary.inputTokens;
  record.outputTokens = summary.outputTokens;
  record.cacheReadInputTokens = summary.cacheReadInputTokens;
  record.cacheCreationInputTokens = summary.cacheCreationInputTokens;
  record.toolCalls = summary.toolCalls;
  record.toolCallOutcomes = summary.toolCallOutcomes;
  record.firstOutputAt = call.events.firstOutputAt;
  return summary.outputTokens;
}

/**
 * How long a stream's opening may wait for the first output, to go out in one socket write with
 * it (http/sse-writer.ts). Short against the 50 ms within which the opening must reach the client
 * (docs/benchmarks.md, early stream start), and long enough for an engine on the same machine or
 * network that answers at once: through the gateway bench a stream took three writes, not two.
 */
const OPENING_HOLD_MS = 5;

/**
 * The stream opens as soon as the request is admitted: headers, message_start and a ping go out
 * before the request has its slot or the backend its first output (after OPENING_HOLD_MS at most),
 * so that a deep queue or a long prefill does not look like a dead server to a client's
 * first-byte timer; the ping every `pingIntervalMs` that a quiet stream gets keeps its idle timer
 * fed while it waits.
 */
async function streamReply(
  context: RouteContext,
  call: MessageCall,
  sse: SseWriter,
  redaction: ReplyRedaction,
): Promise<void> {
  const events = call.events;
  // A fallback list chooses its backend at the first output, after the headers: the header then
  // names the list, and a trailer the backend that answered (docs/decisions/0015).
  sse.open({ 'request-id': context.requestId, ...replyHeaders(call) }, call.backendChosenLater ? ['mms-backend'] : []);
  try {
    await sse.write(events.start(), OPENING_HOLD_MS);
    if (context.response.destroyed) return;
    for (let next = await events.next(); !next.done; next = await events.next()) {
      await sse.write(next.value);
      // Gone (or cut off by its write deadline): the turn stops here, in `finally`, rather than
      // generating the rest for nobody; the cancellation has already told the backend.
      if (context.response.destroyed) return;
    }
  } catch (error) {
    // After the first byte the status is sent: the failure travels as an `error` event, before
    // the first content as after it, and the stream ends without message_stop, so no client
    // mistakes it for a finished message. A client that went away is not a failure of ours:
    // nothing to log, nobody to tell.
    if (context.response.destroyed) return;
    const reply = errorReply(error, context.requestId, redaction);
    context.record.errorCode = reply.code;
    context.record.errorStatus = reply.status;
    if (reply.unexpected) context.log.error({ err: error, reqId: context.requestId }, 'stream failed');
    else if (reply.detail !== undefined)
      context.log.warn({ reqId: context.requestId, detail: reply.detail }, reply.body.error.message);
    await sse.write([streamErrorEvent(reply)]);
  } finally {
    sse.end(call.backendChosenLater ? { 'mms-backend': call.backendName() } : undefined);
    await events.return();
  }
}

/**
 * What the service says about a reply, JSON or streamed, beside its body: the backend that
 * answered, a max_tokens the model lowered (`mms-max-tokens-clamped: 128000 -> 64000`), the
 * unknown fields dropped (`mms-ignored-fields`), so that neither is ever silent, and the key's
 * limits as they stand (`anthropic-ratelimit-*`, limits/rate-limit-headers.ts).
 */
function replyHeaders(call: MessageCall): Record<string, string> {
  const headers: Record<string, string> = { 'mms-backend': call.backendName(), ...call.limitCharge?.headers };
  const clamped = call.maxTokensClamped;
  if (clamped) headers['mms-max-tokens-clamped'] = `${clamped.requested} -> ${clamped.granted}`;
  return call.ignoredFields.length === 0 ? headers : { ...headers, ...ignoredFieldsHeader(call.ignoredFields) };
}

/**
 * The error envelope as an `error` event, with what the status reply's headers would have said:
 * its code (`mms-error-code`: a 502 api_error is model_output_invalid or not) and its
 * `retry-after`. Before the first content these decide a caller's retry as the status did: the
 * calling client's retry ladder and a messages-upstream backend in front of this service read them.
 */
function streamErrorEvent(reply: ErrorReply): StreamEvent {
  const event: StreamEvent = { ...reply.body, mms_error_code: reply.code };
  if (reply.retryAfterSeconds !== undefined) event.mms_retry_after = reply.retryAfterSeconds;
  return event;
}

/** Aborts generation when the client goes away before the reply is complete. */
function abortOnDisconnect(response: ServerResponse): Cancellation {
  const cancellation = new Cancellation();
  response.on('close', () => {
    if (!response.writableFinished) cancellation.abort(new Error('client disconnected'));
  });
  return cancellation;
}

function headerValue(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
