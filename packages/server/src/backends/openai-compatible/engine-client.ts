/**
 * HTTP to one engine (undici, one connection pool per backend, requests sent with `dispatch` and
 * read by dispatched-response.ts), with the three time limits of the backend's config: connect
 * (undici's connector), first byte (from sending to the first bytes of the body) and idle
 * (between chunks). The caller's cancellation ends the request, and a consumer that stops
 * reading closes the connection, which engines treat as a cancel.
 */
import { SseParser, type SseFrame } from '@model-messages/protocol';
import type { Agent } from 'undici';
import { undici } from '../../support/undici.js';
import type { Cancellation } from '../cancellation.js';
import { DispatchedResponse } from '../dispatched-response.js';
import type { ChatCompletionChunk, ChatCompletionRequest } from './chat-types.js';
import { statusError, streamError, transportError, UpstreamTimeoutError, type TimeoutPhase } from './error-mapping.js';

export interface EngineClientOptions {
  engine: string;
  baseURL: string;
  apiKey: string | undefined;
  connectTimeoutMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  /** The backend's model, for the errors about its configuration (error-mapping.ts). */
  modelLabel?: string | undefined;
}

const ERROR_BODY_LIMIT = 64 * 1024;
const LIST_BODY_LIMIT = 4 * 1024 * 1024;

/** An engine's HTTP answer, whatever its status. */
export interface EngineAnswer {
  status: number;
  text: string;
  retryAfter: string | undefined;
}

export class EngineClient {
  /** The OpenAI-style base, without a trailing slash: `<apiBase>/chat/completions`. */
  readonly apiBase: string;
  /** The server's root, for endpoints outside /v1 (vLLM's /tokenize, llama.cpp's /apply-template). */
  readonly root: string;
  private readonly agent: Agent;
  private readonly headers: Record<string, string>;
  /**
   * A chat completion's headers, made once: undici only reads them. Spread per request
   * (`{ ...this.headers, accept }`), they cost about half a microsecond each on Node 20.
   */
  private readonly chatHeaders: Record<string, string>;
  /** Where chat completions go, read once: every request of the backend is one. */
  private readonly chatTarget: Target;

  constructor(private readonly options: EngineClientOptions) {
    this.apiBase = options.baseURL.replace(/\/+$/, '');
    this.root = this.apiBase.replace(/\/v1$/, '');
    this.chatTarget = target(`${this.apiBase}/chat/completions`);
    // Our own timers cover first byte and idle; undici's would measure something slightly different.
    this.agent = new (undici().Agent)({
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    this.headers = {
      'content-type': 'application/json',
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    };
    this.chatHeaders = { ...this.headers, accept: 'text/event-stream' };
  }

  /**
   * The chat completion's chunks as they arrive; a server that answered with one JSON body yields
   * it once. The response's `abort` ends the request: our time limits abort it, and it follows
   * the caller's cancellation (aborted with the caller's reason, which the caller gets back).
   */
  async *streamChat(
    body: ChatCompletionRequest,
    cancellation: Cancellation,
  ): AsyncGenerator<ChatCompletionChunk, { done: boolean }> {
    const timer = new Deadline();
    const response = new DispatchedResponse();
    const stopFollowing = cancellation.onAbort((reason) => response.abort(reason));
    timer.arm(response, 'first byte', this.options.firstByteTimeoutMs);
    try {
      await this.send(this.chatTarget, 'POST', body, response, this.chatHeaders);
      if (response.statusCode !== 200)
        throw statusError(
          this.options.engine,
          response.statusCode,
          await response.text(ERROR_BODY_LIMIT),
          response.header('retry-after'),
          this.options.modelLabel,
        );
      if (response.header('content-type')?.includes('application/json')) {
        yield JSON.parse(await response.text(Number.POSITIVE_INFINITY)) as ChatCompletionChunk;
        return { done: true };
      }
      // The stream's chunks up to `[DONE]`, read here rather than through a generator of their
      // own: a `yield*` layer costs each chunk another round of promises (issue 36: 22 of the
      // samples in this function's own time on the gateway bench's JSON path). After `[DONE]`
      // the answer is complete and returned at once; what the engine still sends is dropped as
      // it comes (`discardRest`), which keeps the connection for the next request, without
      // holding back the reply's last events.
      const parser = new SseParser();
      let first = true;
      for (let text = await response.next(); text !== undefined; text = await response.next()) {
        if (first) {
          first = false;
          timer.arm(response, 'idle', this.options.idleTimeoutMs);
        } else {
          timer.refresh();
        }
        for (const frame of parser.push(text)) {
          const chunk = this.chunkOf(frame);
          if (chunk === 'done') {
            timer.clear();
            response.discardRest();
            return { done: true };
          }
          // Time our own client takes to read is not the engine's silence.
          timer.waiting = true;
          yield chunk;
          timer.waiting = false;
          timer.refresh();
        }
      }
      // Engines close right after their last line: a frame without its blank line still counts.
      for (const frame of parser.end()) {
        const chunk = this.chunkOf(frame);
        if (chunk === 'done') return { done: true };
        yield chunk;
      }
      return { done: false };
    } catch (error) {
      throw this.failure(error, response, cancellation);
    } finally {
      stopFollowing();
      timer.clear();
      // Left before its end (an error, a consumer that stopped): closing is the cancel.
      response.leave();
    }
  }

  /**
   * A GET whose status the caller reads itself (the start-up check's model list, GET /ready's
   * probe), within `timeoutMs` (default: the backend's first byte limit).
   */
  get(url: string, timeoutMs = this.options.firstByteTimeoutMs): Promise<EngineAnswer> {
    return this.answer(url, 'GET', undefined, LIST_BODY_LIMIT, timeoutMs);
  }

  /** A POST whose status the caller judges (the tokenizer endpoints, which a deployment may not serve). */
  post(url: string, body: unknown): Promise<EngineAnswer> {
    return this.answer(url, 'POST', body, Number.POSITIVE_INFINITY, this.options.firstByteTimeoutMs);
  }

  /** The engine kind, as error messages name it. */
  get engine(): string {
    return this.options.engine;
  }

  /** The backend's model, as the errors about its configuration name it. */
  get modelLabel(): string | undefined {
    return this.options.modelLabel;
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /**
   * Any HTTP answer is returned, its body read up to `okLimit` on a 200 and a short excerpt
   * otherwise; a failure with no answer (refused, reset, our time limit) is thrown, mapped.
   */
  private async answer(
    url: string,
    method: 'GET' | 'POST',
    body: unknown,
    okLimit: number,
    timeoutMs: number,
  ): Promise<EngineAnswer> {
    const timer = new Deadline();
    const response = new DispatchedResponse();
    timer.arm(response, 'first byte', timeoutMs);
    try {
      await this.send(target(url), method, body, response, this.headers);
      const text = await response.text(response.statusCode === 200 ? okLimit : ERROR_BODY_LIMIT);
      return { status: response.statusCode, text, retryAfter: response.header('retry-after') };
    } catch (error) {
      throw this.failure(error, response);
    } finally {
      timer.clear();
    }
  }

  /** Sends the request; settles when `response` has its status and headers. */
  private send(
    { origin, path }: Target,
    method: 'GET' | 'POST',
    body: unknown,
    response: DispatchedResponse,
    headers: Record<string, string>,
  ): Promise<void> {
    return response.send(this.agent, {
      origin,
      path,
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
    });
  }

  /**
   * llama.cpp's `error:` lines come first and always throw, so data sharing their frame is never
   * read. The `event` field carries nothing the chat completions stream uses.
   */
  private chunkOf(frame: SseFrame): ChatCompletionChunk | 'done' {
    if (frame.error !== undefined)
      throw streamError(this.options.engine, this.parse(frame.error), this.options.modelLabel);
    if (frame.data.trim() === '[DONE]') return 'done';
    return this.parse(frame.data) as ChatCompletionChunk;
  }

  private parse(data: string): unknown {
    try {
      return JSON.parse(data);
    } catch {
      throw streamError(this.options.engine, {
        error: { message: `unreadable chunk from the engine: ${data.slice(0, 200)}` },
      });
    }
  }

  /** Our timeout, the caller's abort (passed on as it is), or the engine's failure. */
  private failure(error: unknown, response: DispatchedResponse, cancellation?: Cancellation): unknown {
    if (response.aborted && response.reason instanceof UpstreamTimeoutError)
      return transportError(this.options.engine, response.reason);
    if (cancellation?.aborted) return cancellation.reason ?? error;
    return transportError(this.options.engine, error);
  }
}

/** An engine URL as undici's dispatch takes it. */
interface Target {
  origin: string;
  path: string;
}

function target(url: string): Target {
  const { origin, pathname, search } = new URL(url);
  return { origin, path: pathname + search };
}

/** One timer per request, re-armed per phase and refreshed per chunk (Timeout.refresh allocates nothing). */
class Deadline {
  private timer: NodeJS.Timeout | undefined;
  /** The consumer has a chunk and has not asked for the next: the engine is not the one waited on. */
  waiting = false;

  arm(response: DispatchedResponse, phase: TimeoutPhase, ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.waiting) this.timer?.refresh();
      else response.abort(new UpstreamTimeoutError(phase, ms));
    }, ms);
  }

  refresh(): void {
    this.timer?.refresh();
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}
