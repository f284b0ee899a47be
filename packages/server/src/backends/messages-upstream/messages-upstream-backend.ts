/**
 * A model served by another service with this same contract (another mms, say). Every step is
 * streamed from the upstream, whether or not our caller streams: its events become our parts,
 * so our encoder frames them and the JSON reply stays the fold of the stream. Our rules have
 * already run in the handler; the upstream checks its own again. Server tools run here, not
 * upstream (upstream-request.ts). The caller's cancellation closes the upstream connection, which stops
 * its generation.
 */
import {
  API_VERSION,
  ERROR_CODE_HEADER,
  ServiceError,
  SseParser,
  VERSION_HEADER,
  type ModelProfile,
} from '@model-messages/protocol';
import type { Agent } from 'undici';
import { undici } from '../../support/undici.js';
import { DispatchedResponse } from '../dispatched-response.js';
import type { Backend, BackendReadiness } from '../backend.js';
import type { BackendContext } from '../backend-kind.js';
import type { ModelCall, ModelPrompt } from '../call/model-call.js';
import type { Cancellation } from '../cancellation.js';
import { answeredReadiness, PROBE_TIMEOUT_MS, ReadinessProbe, unreachable } from '../readiness-probe.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import type { MessagesUpstreamBackendConfig } from './messages-upstream-config.js';
import { transportError, upstreamError, type UpstreamErrorBody } from './upstream-errors.js';
import { UpstreamEventReader } from './upstream-events.js';
import { serverToolNames, upstreamCountBody, upstreamMessageBody } from './upstream-request.js';

/** Longest error body read from the upstream, in characters. */
const MAX_ERROR_BODY_LENGTH = 64 * 1024;
/** Longest answer read from the upstream's model endpoint (the start-up check, readiness). */
const MAX_MODEL_BODY_LENGTH = 1024 * 1024;

export class MessagesUpstreamBackend implements Backend {
  readonly name = 'messages-upstream';
  readonly telemetryName: string;
  private readonly agent: Agent;
  private readonly origin: string;
  private readonly basePath: string;
  /** The upstream's address, for the start-up lines (the operator's), never a reply. */
  private readonly where: string;
  /** The backend as error replies name it: by its model (upstream-errors.ts). */
  private readonly label: string;
  private readonly model: string;
  private readonly headers: Record<string, string>;
  private readonly missingKeyEnv: string | undefined;
  /** The start-up check's GET /v1/models/<model>, within the probe's short time limit. */
  private readonly probe: ReadinessProbe;

  constructor(
    private readonly config: MessagesUpstreamBackendConfig,
    context: Pick<BackendContext, 'profile' | 'modelLabel' | 'now' | 'telemetryName'>,
  ) {
    const { profile, modelLabel } = context;
    this.telemetryName = context.telemetryName;
    const url = new URL(config.baseURL);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.where = `${url.origin}${this.basePath}`;
    this.label = `the messages-upstream backend of ${modelLabel}`;
    this.model = config.model ?? profile.id;
    const apiKey = config.apiKey ?? (config.apiKeyEnv === undefined ? undefined : process.env[config.apiKeyEnv]);
    this.missingKeyEnv = config.apiKeyEnv !== undefined && !apiKey ? config.apiKeyEnv : undefined;
    this.headers = {
      'content-type': 'application/json',
      accept: 'text/event-stream, application/json',
      [VERSION_HEADER]: API_VERSION,
      ...(apiKey ? { 'x-api-key': apiKey } : {}),
    };
    this.agent = new (undici().Agent)({
      connect: { timeout: config.connectTimeoutMs },
      headersTimeout: config.firstByteTimeoutMs,
      bodyTimeout: config.idleTimeoutMs,
    });
    this.probe = new ReadinessProbe(
      () =>
        this.modelStatus(PROBE_TIMEOUT_MS).then(
          (status) => answeredReadiness(this.name, status),
          () => unreachable(this.name),
        ),
      context.now,
    );
  }

  async *stream(call: ModelCall, cancellation: Cancellation): AsyncGenerator<StreamPart[]> {
    cancellation.throwIfAborted();
    const headers =
      this.config.forwardFaults && call.fault ? { ...this.headers, 'mms-fault': call.fault } : this.headers;
    const body = JSON.stringify(upstreamMessageBody(call, this.model));
    const reader = new UpstreamEventReader(this.label, serverToolNames(call));
    // One response per call: the caller's abort, and the first-output timer, both end it.
    const response = new DispatchedResponse();
    const stopFollowing = cancellation.onAbort((reason) => response.abort(reason));
    const firstOutputTimer = setTimeout(
      () =>
        response.abort(
          new ServiceError(
            'timeout',
            `${this.label} failed: no output within firstByteTimeoutMs (${this.config.firstByteTimeoutMs} ms)`,
          ),
        ),
      this.config.firstByteTimeoutMs,
    );
    try {
      await response
        .send(this.agent, { origin: this.origin, path: `${this.basePath}/v1/messages`, method: 'POST', headers, body })
        .catch((error: unknown) => {
          throw this.failure(error, response);
        });
      if (response.statusCode !== 200) throw await this.statusError(response);
      const contentType = response.header('content-type') ?? '';
      if (!contentType.startsWith('text/event-stream'))
        throw new ServiceError(
          'internal',
          `${this.label} failed: its upstream answered a streamed request with ${contentType || 'no content-type'}, not text/event-stream`,
        );
      const parser = new SseParser();
      for (;;) {
        const text = await response.next().catch((error: unknown) => {
          throw this.failure(error, response);
        });
        if (text === undefined) break;
        const parts: StreamPart[] = [];
        let failure: unknown;
        try {
          for (const event of parser.push(text)) {
            // `error:` lines are llama.cpp's, not this contract's: a frame of only those carries
            // no event. A frame cut off by the end of the body is never read (no parser.end()):
            // the stream counts as ended before message_stop.
            if (event.error !== undefined && event.data === '') continue;
            reader.read(event.data, parts);
            if (reader.finished) break;
          }
        } catch (error) {
          failure = error;
        }
        if (parts.length > 0) clearTimeout(firstOutputTimer);
        if (failure !== undefined) {
          // An `event: error` after output: what came before it reaches the client first, as
          // it would from the upstream itself, and the error follows as an error event.
          if (parts.length > 0) yield parts;
          throw failure;
        }
        if (reader.finished) {
          // What follows is dropped as it comes, so that the connection goes back to the pool
          // instead of being closed, without holding back message_stop for an upstream (or a
          // proxy) that lingers before closing.
          response.discardRest();
          yield parts;
          return;
        }
        if (parts.length > 0) yield parts;
      }
      throw new ServiceError('internal', `${this.label} failed: its upstream's stream ended before message_stop`);
    } finally {
      clearTimeout(firstOutputTimer);
      stopFollowing();
      // A step left early (client gone, a single tool call taken): closing the connection
      // is what tells the upstream to stop generating.
      if (!reader.finished) response.abort(cancellation.aborted ? cancellation.reason : new Error('step ended'));
    }
  }

  async countTokens(prompt: ModelPrompt): Promise<number> {
    const body = JSON.stringify(upstreamCountBody(prompt, this.model));
    const response = new DispatchedResponse();
    let text: string;
    try {
      await response.send(this.agent, {
        origin: this.origin,
        path: `${this.basePath}/v1/messages/count_tokens`,
        method: 'POST',
        headers: this.headers,
        body,
      });
      if (response.statusCode !== 200) throw await this.statusError(response);
      text = await response.text(Number.POSITIVE_INFINITY);
    } catch (error) {
      throw error instanceof ServiceError ? error : transportError(this.label, error);
    }
    let counted: { input_tokens?: unknown };
    try {
      counted = JSON.parse(text) as { input_tokens?: unknown };
    } catch (error) {
      throw new ServiceError('internal', `${this.label} failed: its count_tokens answer is not JSON`, { cause: error });
    }
    if (typeof counted.input_tokens !== 'number')
      throw new ServiceError(
        'internal',
        `${this.label} failed: its upstream's count_tokens answered without input_tokens`,
      );
    return counted.input_tokens;
  }

  /**
   * One look at the upstream before the service listens: whether it answers and knows the
   * model. An upstream that is down now does not stop the start (it may be up by the first
   * request, and a fallback list skips it meanwhile); what cannot fix itself does, with the fix
   * in the message: a key variable that is not set, or the upstream refusing our key. A model
   * it does not list is a warning only, since a service with this contract need not have the
   * models endpoint.
   */
  async prepare(): Promise<string> {
    if (this.missingKeyEnv !== undefined)
      throw new Error(
        `upstream ${this.where}: the environment variable ${this.missingKeyEnv} (backend.apiKeyEnv) is not set`,
      );
    let status: number;
    try {
      status = await this.modelStatus(this.config.connectTimeoutMs + 5_000);
    } catch (error) {
      const reason = transportError(this.label, error).message.replace(`${this.label} failed: `, '');
      return `upstream ${this.where} is not reachable now (${reason}); every request tries it again`;
    }
    if (status === 401 || status === 403)
      throw new Error(
        `upstream ${this.where} refused this service's API key (${status}); check backend.apiKey or backend.apiKeyEnv`,
      );
    if (status === 200) return `upstream ${this.where}, model ${this.model}`;
    if (status === 404)
      return `upstream ${this.where} answers, but does not list the model ${this.model}; set backend.model to one it serves`;
    return `upstream ${this.where} answers ${status} to GET /v1/models/${this.model}; its requests may fail until it is ready`;
  }

  /** The upstream loads its models itself. */
  async load(): Promise<void> {}

  async readiness(): Promise<BackendReadiness[]> {
    return [await this.probe.answer()];
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }

  /** The status of GET /v1/models/<model> on the upstream; a failure to get one is thrown. */
  private async modelStatus(timeoutMs: number): Promise<number> {
    const response = new DispatchedResponse();
    const timer = setTimeout(() => response.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    try {
      await response.send(this.agent, {
        origin: this.origin,
        path: `${this.basePath}/v1/models/${encodeURIComponent(this.model)}`,
        method: 'GET',
        headers: this.headers,
      });
      await response.text(MAX_MODEL_BODY_LENGTH);
      return response.statusCode;
    } finally {
      clearTimeout(timer);
    }
  }

  /** A transport failure, unless it is the caller's abort (passed on as is) or our own timer. */
  private failure(error: unknown, response: DispatchedResponse): unknown {
    if (response.aborted) return response.reason instanceof ServiceError ? response.reason : (response.reason ?? error);
    return transportError(this.label, error);
  }

  private async statusError(response: DispatchedResponse): Promise<ServiceError> {
    const text = (await response.text(MAX_ERROR_BODY_LENGTH).catch(() => '')).slice(0, MAX_ERROR_BODY_LENGTH);
    let parsed: UpstreamErrorBody | undefined;
    try {
      parsed = JSON.parse(text) as UpstreamErrorBody;
    } catch {
      parsed = undefined;
    }
    return upstreamError(
      this.label,
      response.statusCode,
      parsed,
      response.header('retry-after'),
      response.header(ERROR_CODE_HEADER),
      this.where,
    );
  }
}
