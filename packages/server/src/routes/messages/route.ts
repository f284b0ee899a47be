/** HTTP glue for `POST /v1/messages`: JSON reply or SSE stream over one event source. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamEvent } from '@mms/protocol';
import type { ConnectionClosing } from '../../http/connection-closing.js';
import { Cancellation } from '../../backends/cancellation.js';
import { errorReply, type ErrorReply } from '../../http/error-reply.js';
import type { ReplyRedaction } from '../../http/reply-redaction.js';
import { readJsonBody } from '../../http/request-body.js';
import { WRITTEN, type RouteContext, type Router } from '../../http/router.js';
import { SseWriter } from '../../http/sse-writer.js';
import { WriteDeadline } from '../../http/write-deadline.js';
import { MessageFold } from '../../streaming/message-fold.js';
import { startMessage, type MessageServices } from './handler.js';
import type { MessageEvents } from './message-events.js';

/** How replies are written: the app's settings and its closing state. */
export interface ReplyOptions {
  pingIntervalMs: number;
  /** listen.writeTimeoutMs (http/write-deadline.ts). */
  writeTimeoutMs: number;
  closing: ConnectionClosing;
  /** Takes configured secrets and addresses out of an `event: error` (http/reply-redaction.ts). */
  redaction: ReplyRedaction;
  /** Told of a stream cut off by its write deadline, for the log. */
  onCut?: (response: ServerResponse) => void;
}

export function registerMessagesRoute(router: Router, services: MessageServices, options: ReplyOptions): void {
  router.post('/v1/messages', async (context) => {
    const cancellation = abortOnDisconnect(context.response);
    const body = await readJsonBody(context.request);
    const call = await startMessage(body, headerValue(context.request, 'mms-fault'), services, cancellation);
    // Headers go out only after the first batch: by then the backend that answers is known.
    const first = await call.events.next();
    if (!call.stream) {
      // The JSON reply is the fold of the very events a stream would write.
      const fold = new MessageFold();
      for (let next = first; !next.done; next = await call.events.next())
        for (const event of next.value) fold.apply(event);
      return { body: fold.result(), headers: { 'mms-backend': call.backendName() } };
    }
    const deadline = new WriteDeadline(context.response, options.writeTimeoutMs, options.onCut);
    await streamReply(
      context,
      first,
      call.events,
      new SseWriter(context.response, options.pingIntervalMs, options.closing, deadline),
      call.backendName(),
      options.redaction,
    );
    return WRITTEN;
  });
}

async function streamReply(
  context: RouteContext,
  first: IteratorResult<StreamEvent[]>,
  events: MessageEvents,
  sse: SseWriter,
  backendName: string,
  redaction: ReplyRedaction,
): Promise<void> {
  sse.open({ 'request-id': context.requestId, 'mms-backend': backendName });
  try {
    for (let next = first; !next.done; next = await events.next()) {
      await sse.write(next.value);
      // Gone (or cut off by its write deadline): the turn stops here, in `finally`, rather than
      // generating the rest for nobody; the cancellation has already told the backend.
      if (context.response.destroyed) return;
    }
  } catch (error) {
    // After the first byte the status is sent: the failure travels as an `error` event, and
    // the stream ends without message_stop, so no client mistakes it for a finished message.
    // A client that went away is not a failure of ours: nothing to log, nobody to tell.
    if (context.response.destroyed) return;
    const reply = errorReply(error, context.requestId, redaction);
    if (reply.unexpected) context.log.error({ err: error, reqId: context.requestId }, 'stream failed');
    else if (reply.detail !== undefined)
      context.log.warn({ reqId: context.requestId, detail: reply.detail }, reply.body.error.message);
    await sse.write([streamErrorEvent(reply)]);
  } finally {
    sse.end();
    await events.return();
  }
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
