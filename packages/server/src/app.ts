/**
 * Every route and its hooks on one screen. Order of checks on a request: request id ->
 * API key (not for /health) -> version header (on /v1) -> body size and JSON -> route.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { MAX_REQUEST_BYTES, ServiceError } from '@mms/protocol';
import type { ServerToolRunner } from './agent/server-tool-runner.js';
import type { ServiceConfig } from './config/config-schema.js';
import { ApiKeyCheck } from './http/auth.js';
import { ConnectionClosing } from './http/connection-closing.js';
import { errorReply } from './http/error-reply.js';
import { ReplyBatching } from './http/reply-batching.js';
import { newRequestId } from './http/request-id.js';
import { assertVersionHeader } from './http/version-header.js';
import type { ModelRegistry } from './models/model-registry.js';
import { registerCountTokensRoute } from './routes/count-tokens/route.js';
import { registerMessagesRoute } from './routes/messages/route.js';
import { registerModelsRoutes } from './routes/models/route.js';
import { ServiceTools, type ToolProviders } from './tools/service-tools.js';

export interface AppOptions {
  config: ServiceConfig;
  registry: ModelRegistry;
  serverTools?: ServerToolRunner;
  /** A code runner or host lookup in place of the built-in ones (ignored when serverTools is given). */
  toolProviders?: ToolProviders;
  logger?: FastifyServerOptions['logger'];
}

export function buildApp(options: AppOptions): FastifyInstance {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: MAX_REQUEST_BYTES,
    genReqId: newRequestId,
    requestIdHeader: false,
    // Per-request access lines would cost more than the request on the scripted backend.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: false,
  });
  // Bodies are JSON only (spec: Authentication, content-type): no plain-text parser.
  app.removeContentTypeParser('text/plain');
  const keys = new ApiKeyCheck(options.config.apiKeys);
  const closing = new ConnectionClosing();
  app.addHook('preClose', (done) => {
    closing.start();
    done();
  });
  const batching = new ReplyBatching((error) => app.log.error({ err: error }, 'writing a reply failed'));
  // Each turn's replies go out together, at its end (http/reply-batching.ts).
  app.addHook('onSend', (request, reply, payload, done) => {
    batching.defer(() => {
      // Replies in flight when closing starts close their connections (http/connection-closing.ts).
      if (closing.started) reply.header('connection', 'close');
      done(null, payload);
    });
  });

  // A callback hook rather than an async one: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    // On the framework's reply, not the raw response: a header set on the raw response sends
    // the whole reply down node:http's slower per-header path. The streaming route, which
    // hijacks the reply, writes request-id itself (http/sse-writer.ts).
    reply.header('request-id', request.id);
    try {
      if (!isHealthRoute(request.url)) {
        keys.assertAuthorized(request.headers);
        if (request.url.startsWith('/v1/')) assertVersionHeader(request.headers);
      }
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });

  app.setErrorHandler((error, request, reply) => {
    const { status, body, headers, unexpected } = errorReply(error, request.id);
    // An abort after the client went away is no failure of the service.
    if (unexpected && !reply.raw.destroyed) request.log.error({ err: error }, 'request failed');
    return reply.status(status).headers(headers).send(body);
  });
  app.setNotFoundHandler((request) => {
    throw new ServiceError('not_found', `${request.method} ${request.url.split('?')[0]} is not an endpoint of this service`);
  });

  app.get('/health', async () => ({ status: 'ok' }));
  const serverTools = options.serverTools ?? new ServiceTools(options.config.serverTools, options.toolProviders);
  registerMessagesRoute(app, { registry: options.registry, serverTools, maxSteps: options.config.maxSteps }, options.config.pingIntervalMs, closing);
  registerCountTokensRoute(app, options.registry);
  registerModelsRoutes(app, options.registry);
  app.addHook('onClose', async () => {
    await options.registry.close();
    if (serverTools instanceof ServiceTools) await serverTools.close();
  });
  return app;
}

/**
 * The health route, with or without a query (a probe may add one to defeat caches): the only
 * route that needs no key. `/health/` is not that route (no trailing-slash matching), so it is
 * an unknown path, which needs a key like any other before it is told so.
 */
function isHealthRoute(url: string): boolean {
  return url === '/health' || url.startsWith('/health?');
}
