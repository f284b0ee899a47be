/** HTTP glue for `POST /v1/messages`: JSON reply or SSE stream over one event source. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StreamEvent } from '@mms/protocol';
import type { ConnectionClosing } from '../../http/connection-closing.js';
import { Cancellation } from '../../backends/cancellation.js';
import { errorReply } from '../../http/error-reply.js';
import { SseWriter } from '../../http/sse-writer.js';
import { MessageFold } from '../../streaming/message-fold.js';
import { startMessage, type MessageServices } from './handler.js';

export function registerMessagesRoute(app: FastifyInstance, services: MessageServices, pingIntervalMs: number, closing: ConnectionClosing): void {
  app.post('/v1/messages', async (request, reply) => {
    const cancellation = abortOnDisconnect(reply);
    const call = await startMessage(request.body, headerValue(request, 'mms-fault'), services, cancellation);
    // Headers go out only after the first batch: by then the backend that answers is known.
    const first = await call.events.next();
    if (!call.stream) {
      const message = await foldReply(first, call.events);
      reply.header('mms-backend', call.backendName());
      return message;
    }
    reply.hijack();
    await streamReply(request, reply, first, call.events, new SseWriter(reply.raw, pingIntervalMs, closing), call.backendName());
    return reply;
  });
}

async function foldReply(first: IteratorResult<StreamEvent[]>, events: AsyncGenerator<StreamEvent[]>) {
  const fold = new MessageFold();
  for (let next = first; !next.done; next = await events.next()) next.value.forEach((event) => fold.apply(event));
  return fold.result();
}

async function streamReply(request: FastifyRequest, reply: FastifyReply, first: IteratorResult<StreamEvent[]>, events: AsyncGenerator<StreamEvent[]>, sse: SseWriter, backendName: string): Promise<void> {
  sse.open({ 'request-id': request.id, 'mms-backend': backendName });
  try {
    for (let next = first; !next.done; next = await events.next()) await sse.write(next.value);
  } catch (error) {
    // After the first byte the status is sent: the failure travels as an `error` event, and
    // the stream ends without message_stop, so no client mistakes it for a finished message.
    // A client that went away is not a failure of ours: nothing to log, nobody to tell.
    if (reply.raw.destroyed) return;
    const { body, unexpected } = errorReply(error, request.id);
    if (unexpected) request.log.error({ err: error }, 'stream failed');
    await sse.write([body]);
  } finally {
    sse.end();
    await events.return(undefined);
  }
}

/** Aborts generation when the client goes away before the reply is complete. */
function abortOnDisconnect(reply: FastifyReply): Cancellation {
  const cancellation = new Cancellation();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) cancellation.abort(new Error('client disconnected'));
  });
  return cancellation;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
