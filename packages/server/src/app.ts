/**
 * The service on node:http: every route and the checks before them on one screen. Order of
 * checks on a request: request id -> the edge's own (a connection over listen.maxConnections:
 * 503; HTTP/1.1 without Host: 400; an Expect other than 100-continue: 417) -> API key (not for
 * /health and /ready, the console's page and files, nor for /metrics when the config makes it public) -> version header (on
 * /v1) -> route (404 when none) -> body size, the budget of body bytes in flight (issue 31) and
 * JSON (in the routes that take a body). What node:http would answer on its own, before a request
 * reaches here, is answered in the same envelope (http/socket-error-reply.ts). Every request that
 * reaches here ends in one access log line, its metrics and its span
 * (observability/request-observer.ts).
 *
 * No web framework: the one used before cost a fifth of the service's throughput on the
 * scripted backend, for routing five paths and reading a JSON body (docs/decisions/0012).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { pino, type DestinationStream, type Logger } from 'pino';
import { ServiceError, type ApiVersion } from '@model-messages/protocol';
import type { ServerToolRunner } from './agent/server-tool-runner.js';
import type { ServiceConfig } from './config/config-schema.js';
import { configuredSecrets } from './config/configured-secrets.js';
import { ApiKeyCheck } from './http/auth.js';
import type { ClientKey } from './keys/client-key.js';
import { KeyLimiter } from './limits/key-limiter.js';
import { BodyMemoryBudget } from './http/body-memory-budget.js';
import { ConnectionClosing } from './http/connection-closing.js';
import { ConnectionLimit } from './http/connection-limit.js';
import { errorReply } from './http/error-reply.js';
import { endJsonBody } from './http/json-body-writing.js';
import { defaultMaxBodyMemoryInFlight } from './http/machine-memory.js';
import { defaultMaxConnections } from './http/open-file-limit.js';
import { reasonPhrase } from './http/reason-phrase.js';
import { ReplyBatching } from './http/reply-batching.js';
import { ReplyRedaction } from './http/reply-redaction.js';
import { newRequestId } from './http/request-id.js';
import { Router, WRITTEN } from './http/router.js';
import { clientErrorOf, writeSocketErrorReply } from './http/socket-error-reply.js';
import { assertVersionHeader } from './http/version-header.js';
import type { ModelRegistry } from './models/model-registry.js';
import type { RequestRecord } from './observability/request-record.js';
import { RequestObserver } from './observability/request-observer.js';
import { UsageRecorder } from './observability/usage-recorder.js';
import { registerCountTokensRoute } from './routes/count-tokens/route.js';
import { registerMessagesRoute } from './routes/messages/route.js';
import { registerMetricsRoute } from './routes/metrics/route.js';
import { registerEnginesRoute } from './routes/admin/engines-route.js';
import { registerKeysRoute } from './routes/admin/keys-route.js';
import { registerRequestsRoutes } from './routes/admin/requests-route.js';
import { registerAdminUsageRoute } from './routes/admin/usage-route.js';
import { registerConsoleRoutes } from './routes/console/route.js';
import { registerModelsRoutes } from './routes/models/route.js';
import { registerReadyRoute } from './routes/ready/route.js';
import { registerUsageRoute } from './routes/usage/route.js';
import { Signer } from './signing/signer.js';
import { resolveSigningKey, type SigningKeys } from './signing/signing-key.js';
import { ServiceTools, type ToolProviders } from './tools/service-tools.js';

export interface AppOptions {
  config: ServiceConfig;
  registry: ModelRegistry;
  serverTools?: ServerToolRunner;
  /** A code runner or host lookup in place of the built-in ones (ignored when serverTools is given). */
  toolProviders?: ToolProviders;
  /**
   * The signing key (docs/decisions/0014-signed-server-blocks.md), in place of the config's
   * `signingKey` or the key file in its `dataFolder`; with none of the three, a random key for
   * this app alone. A string needs 32 characters, bytes 32 bytes; a list of strings, or resolved
   * keys, signs with the first and verifies with all.
   */
  signingKey?: string | readonly string[] | Uint8Array | SigningKeys;
  /** JSON log lines on stdout from this level up; silent when not given (tests, benchmarks). */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
  /** Where the log lines go instead of stdout (a test reads them). */
  logDestination?: DestinationStream;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/** While closing, how often the connections left are looked at (endConnectionsOnceAnswered). */
const IDLE_SWEEP_MS = 100;
/**
 * How often node:http looks for requests past headersTimeoutMs or requestTimeoutMs. Its default,
 * 30 s, let a slowloris client's headers trickle for up to 90 s against a 60 s limit; checked
 * every second (every headersTimeoutMs, if shorter), a limit holds to within that.
 */
const LONGEST_TIMEOUT_CHECK_MS = 1_000;
/** The status the log and the metrics give a request whose client went away before its reply (nginx's). */
const CLIENT_CLOSED_REQUEST = 499;
/** The methods this service has routes for, for the 405 that answers CONNECT. */
const ALLOWED_METHODS = 'GET, HEAD, POST';

/** A request the edge answers itself, before its key is checked. */
interface EdgeRefusal {
  error: ServiceError;
  /** The connection closes after the reply: it came in over the limit, or broke HTTP/1.1. */
  closeConnection: boolean;
}

export function buildApp(options: AppOptions): App {
  return new App(options);
}

export class App {
  readonly server: Server;
  readonly log: Logger;
  /** Signs and verifies with the service's key (docs/decisions/0014-signed-server-blocks.md). */
  readonly signer: Signer;
  private readonly keys: ApiKeyCheck;
  /** The limits of the config's keys (limits/key-limiter.ts). */
  private readonly limiter: KeyLimiter;
  private readonly router = new Router();
  private readonly closing = new ConnectionClosing();
  private readonly limit: ConnectionLimit;
  /** listen.maxBodyMemoryInFlight: the request-body bytes held at once (issue 31). */
  private readonly bodyBudget: BodyMemoryBudget;
  /** Takes the configured secrets and addresses out of error replies (http/reply-redaction.ts). */
  private readonly redaction: ReplyRedaction;
  private readonly batching: ReplyBatching;
  private readonly serverTools: ServerToolRunner;
  /** The access log, the metrics and the spans (observability/). */
  private readonly observer: RequestObserver;
  /** Writes the usage history the console charts (issue 37). */
  private readonly usageRecorder: UsageRecorder;
  private closed: Promise<void> | undefined;
  /** Requests being answered (a JSON reply counts until its write is queued, a stream until it ends). */
  private inFlight = 0;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly options: AppOptions) {
    const logOptions = { level: options.logLevel ?? 'silent' };
    this.log = options.logDestination ? pino(logOptions, options.logDestination) : pino(logOptions);
    const listen = options.config.listen;
    this.limiter = KeyLimiter.fromConfig(options.config.limits, options.config.dataFolder, (event) =>
      this.observer.report(event),
    );
    this.bodyBudget = new BodyMemoryBudget(listen.maxBodyMemoryInFlight ?? defaultMaxBodyMemoryInFlight());
    this.observer = new RequestObserver(this.log, options.registry, this.limiter, this.bodyBudget);
    this.keys = new ApiKeyCheck(options.config.apiKeys, options.config.keys);
    this.usageRecorder = new UsageRecorder(this.observer.metrics, this.limiter.usageHistory, (error) =>
      this.log.warn(
        { event: 'usage-history', detail: (error as Error).message },
        'the usage history could not be written; kept for the next write',
      ),
    );
    this.limit = new ConnectionLimit(listen.maxConnections ?? defaultMaxConnections());
    this.redaction = new ReplyRedaction(configuredSecrets(options.config));
    this.batching = new ReplyBatching((error) => this.log.error({ err: error }, 'writing a reply failed'));
    const keys =
      options.signingKey instanceof Uint8Array
        ? { current: Buffer.from(options.signingKey), retired: [] }
        : options.signingKey !== undefined && typeof options.signingKey === 'object' && 'current' in options.signingKey
          ? options.signingKey
          : resolveSigningKey({
              signingKey: options.signingKey ?? options.config.signingKey,
              dataFolder: options.config.dataFolder,
            });
    this.signer = new Signer(keys.current, keys.retired);
    this.serverTools =
      options.serverTools ?? new ServiceTools(options.config.serverTools, this.signer, options.toolProviders);
    this.router.get('/health', async () => ({ body: { status: 'ok' } }));
    registerMessagesRoute(
      this.router,
      {
        registry: options.registry,
        serverTools: this.serverTools,
        maxSteps: options.config.maxSteps,
        signer: this.signer,
        unknownFields: options.config.unknownFields,
      },
      this.limiter,
      {
        pingIntervalMs: options.config.pingIntervalMs,
        writeTimeoutMs: listen.writeTimeoutMs,
        closing: this.closing,
        redaction: this.redaction,
        onCut: this.logCutOff,
      },
    );
    registerCountTokensRoute(this.router, options.registry, this.signer, options.config.unknownFields);
    registerModelsRoutes(this.router, options.registry);
    registerReadyRoute(this.router, options.registry);
    registerMetricsRoute(this.router, this.observer.metrics);
    registerUsageRoute(this.router, this.observer.metrics);
    // The operator's console and the admin endpoints it reads (issue 37).
    registerRequestsRoutes(this.router, this.observer.liveFeed);
    registerAdminUsageRoute(this.router, this.usageRecorder, this.limiter.usageHistory);
    registerKeysRoute(this.router, this.limiter, this.keys.identities, options.config.keys);
    registerEnginesRoute(this.router, options.registry, this.observer.liveFeed, this.observer.recentEvents);
    registerConsoleRoutes(this.router);
    this.server = createServer(
      {
        keepAliveTimeout: listen.keepAliveTimeoutMs,
        headersTimeout: listen.headersTimeoutMs,
        requestTimeout: listen.requestTimeoutMs,
        connectionsCheckingInterval: Math.min(LONGEST_TIMEOUT_CHECK_MS, listen.headersTimeoutMs),
        // Checked in handle(), so that the 400 has the envelope and a request-id.
        requireHostHeader: false,
      },
      (request, response) => void this.handle(request, response),
    );
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      this.limit.admit(socket);
    });
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
      this.answerClientError(error, socket),
    );
    // node:http answers these itself with a bare 417, and closes a CONNECT without a word.
    this.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
      const error = new ServiceError(
        'expectation_failed',
        `expect: only 100-continue is supported (the request has "${request.headers.expect}")`,
      );
      void this.handle(request, response, { error, closeConnection: false });
    });
    this.server.on('connect', (request: IncomingMessage, socket: Socket) =>
      writeSocketErrorReply(
        socket,
        new ServiceError('method_not_allowed', `${request.method}: this service is not a proxy`),
        { allow: ALLOWED_METHODS },
      ),
    );
  }

  async listen(address: { host: string; port: number }): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(address.port, address.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const bound = this.server.address() as AddressInfo;
    const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    this.log.info(
      `Server listening at http://${host}:${bound.port}, holding at most ${this.limit.max} connections (listen.maxConnections) and ${this.bodyBudget.limitMegabytes} MB of request bodies at once (listen.maxBodyMemoryInFlight)`,
    );
  }

  /**
   * Stops listening, lets requests in flight finish (their replies close their connections,
   * http/connection-closing.ts), then closes the models and the server tools. Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  private async shutDown(): Promise<void> {
    this.closing.start();
    // The console's live streams never end by themselves: they would hold the server open.
    this.observer.liveFeed.close();
    if (this.server.listening) {
      // server.close() ends the connections idle at that moment and waits for the others.
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      const sweep = setInterval(() => this.endConnectionsOnceAnswered(), IDLE_SWEEP_MS);
      await closed;
      clearInterval(sweep);
    }
    await this.options.registry.close();
    if (this.serverTools instanceof ServiceTools) await this.serverTools.close();
    await this.usageRecorder.close();
    await this.limiter.close();
    this.observer.close();
  }

  /**
   * While closing: once no request is in flight, every connection left only waits on its client.
   * Replies in flight close their own connections (http/connection-closing.ts), but a connection
   * whose reply went out before closing started can still be busy: its client was sending a body
   * the reply refused (a 413), which node:http reads on and drops, and node:http ends only idle
   * connections. Each is ended after its last byte is out, then destroyed, as a stream's is.
   */
  private endConnectionsOnceAnswered(): void {
    // A reply whose request is done may still wait for its write (a timer's callback can finish
    // a request in the same phase as this sweep, before the batch goes out).
    if (this.inFlight > 0 || this.batching.pending) return;
    for (const socket of this.sockets) {
      if (!socket.writableEnded) socket.end(() => socket.destroy());
    }
  }

  /** `refusal`: the request is answered this error, as node:http found it wrong (an unsupported Expect). */
  private async handle(request: IncomingMessage, response: ServerResponse, refusal?: EdgeRefusal): Promise<void> {
    this.inFlight += 1;
    const requestId = newRequestId();
    const method = request.method ?? 'GET';
    const record = this.observer.begin(requestId, method, request.headers);
    // What this request's body takes from the budget, held until the request ends.
    const bodyMemory = this.bodyBudget.hold();
    this.limit.requestStarted(request.socket);
    const url = request.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart < 0 ? url : url.slice(0, queryStart);
    try {
      const edge = refusal ?? this.edgeRefusal(request);
      if (edge !== undefined) {
        this.sendError(response, record, edge.error, edge.closeConnection);
        return;
      }
      let apiVersion: ApiVersion | undefined;
      let key: ClientKey | undefined;
      if (this.needsKey(path)) {
        key = this.keys.assertAuthorized(request.headers);
        record.keyId = key.id;
        if (path.startsWith('/v1/')) apiVersion = assertVersionHeader(request.headers);
      }
      const match = this.router.find(method, path);
      if (!match) throw new ServiceError('not_found', `${method} ${path} is not an endpoint of this service`);
      record.route = match.route;
      const reply = await match.handler({
        request,
        response,
        requestId,
        apiVersion,
        key,
        params: match.params,
        query: queryStart < 0 ? '' : url.slice(queryStart + 1),
        log: this.log,
        record,
        bodyMemory,
      });
      if (reply === WRITTEN) record.status = response.statusCode;
      else if ('text' in reply) {
        record.status = 200;
        this.sendReply(response, 200, requestId, reply.text, reply.contentType, reply.headers);
      } else {
        record.status = reply.status ?? 200;
        this.sendReply(
          response,
          record.status,
          requestId,
          JSON.stringify(reply.body),
          JSON_CONTENT_TYPE,
          reply.headers,
        );
      }
    } catch (error) {
      this.sendError(response, record, error);
    } finally {
      this.inFlight -= 1;
      bodyMemory.release();
      this.observer.end(record, response);
    }
  }

  /**
   * Every path needs a key but the probes' routes, /health (liveness) and /ready (readiness),
   * since probes carry none, and /metrics where the config makes it public. Each is taken with or
   * without a query (a probe may add one to defeat caches); `/health/` is not such a route, so it
   * is an unknown path, which needs a key like any other before it is told so.
   */
  private needsKey(path: string): boolean {
    if (path === '/health' || path === '/ready') return false;
    // The console's page and files hold no data; what it reads is behind an admin key (issue 37).
    if (path === '/console' || path.startsWith('/console/')) return false;
    return !(path === '/metrics' && this.options.config.metrics.public);
  }

  /** What the edge answers before the key is checked: what node:http itself would refuse. */
  private edgeRefusal(request: IncomingMessage): EdgeRefusal | undefined {
    if (this.limit.refuses(request.socket)) {
      const error = new ServiceError(
        'too_many_connections',
        `the service holds its ${this.limit.max} connections (listen.maxConnections), each with a request in flight; try again shortly`,
        { retryAfterSeconds: 1 },
      );
      return { error, closeConnection: true };
    }
    if (request.httpVersionMajor === 1 && request.httpVersionMinor === 1 && request.headers.host === undefined) {
      const error = new ServiceError('invalid_request', 'host: an HTTP/1.1 request must have a Host header');
      return { error, closeConnection: true };
    }
    return undefined;
  }

  /**
   * node:http's `clientError`: a request it could not parse, headers too large, or a request not
   * received within headersTimeoutMs or requestTimeoutMs. Answered in the envelope where no
   * reply has begun on the connection; a connection that failed otherwise (reset) is closed, as
   * there is no request to answer.
   */
  private answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
    const response = this.limit.responseOn(socket);
    const reply =
      socket.writable && response?.headersSent !== true
        ? clientErrorOf(error, this.options.config.listen, response !== undefined)
        : undefined;
    if (reply === undefined) socket.destroy();
    else writeSocketErrorReply(socket, reply);
  }

  private sendError(response: ServerResponse, record: RequestRecord, error: unknown, closeConnection = false): void {
    const requestId = record.requestId;
    const { status, body, headers, code, unexpected, detail } = errorReply(error, requestId, this.redaction);
    // An abort after the client went away is no failure of the service: nginx's 499, no error code.
    const clientGone = response.destroyed && !response.headersSent;
    if (!clientGone) {
      record.errorCode = code;
      record.errorStatus = status;
    }
    if (unexpected && !response.destroyed) this.log.error({ err: error, reqId: requestId }, 'request failed');
    else if (detail !== undefined) this.log.warn({ reqId: requestId, detail }, body.error.message);
    if (response.headersSent) {
      // A route failed after its reply began: its status is out, so the reply can only be cut.
      record.status = response.statusCode;
      response.destroy();
      return;
    }
    record.status = clientGone ? CLIENT_CLOSED_REQUEST : status;
    this.sendReply(response, status, requestId, JSON.stringify(body), JSON_CONTENT_TYPE, headers, closeConnection);
  }

  /** A reply cut off by its write deadline (http/write-deadline.ts), for the log. */
  private readonly logCutOff = (requestId: string): void => {
    this.log.info({ reqId: requestId }, 'reply cut off: its client stopped reading (listen.writeTimeoutMs)');
  };

  /** Replies go out together at the end of the event loop's turn (http/reply-batching.ts). */
  private sendReply(
    response: ServerResponse,
    status: number,
    requestId: string,
    text: string,
    contentType: string,
    extraHeaders: Record<string, string> | undefined,
    closeConnection = false,
  ): void {
    this.batching.defer(() => {
      const headers: Record<string, string | number> = {
        'content-type': contentType,
        'content-length': Buffer.byteLength(text),
        'request-id': requestId,
        ...extraHeaders,
      };
      // Replies in flight when closing starts close their connections (http/connection-closing.ts).
      if (closeConnection || this.closing.started) headers.connection = 'close';
      response.writeHead(status, reasonPhrase(status), headers);
      endJsonBody(response, requestId, text, this.options.config.listen.writeTimeoutMs, this.logCutOff);
    });
  }
}
