/**
 * HTTP to one engine (undici, one connection pool per backend), with the three time limits of
 * the backend's config: connect (undici's connector), first byte (from sending to the first
 * bytes of the body) and idle (between chunks). The caller's cancellation ends the request,
 * and a consumer that stops reading closes the connection, which engines treat as a cancel.
 */
import { EventEmitter } from 'node:events';
import { SseParser, type SseFrame } from '@model-messages/protocol';
import type { Agent, Dispatcher } from 'undici';
import { undici } from '../../http/undici.js';
import type { Cancellation } from '../cancellation.js';
import type { ChatCompletionChunk, ChatCompletionRequest } from './chat-types.js';
import { drainInBackground, headerValue } from '../response-body.js';
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

  constructor(private readonly options: EngineClientOptions) {
    this.apiBase = options.baseURL.replace(/\/+$/, '');
    this.root = this.apiBase.replace(/\/v1$/, '');
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
  }

  /**
   * The chat completion's chunks as they arrive; a server that answered with one JSON body yields
   * it once. One RequestAbort (below) ends the request: our time limits abort it, and it follows the
   * caller's cancellation (aborted with the caller's reason, which the caller gets back).
   */
  async *streamChat(
    body: ChatCompletionRequest,
    cancellation: Cancellation,
  ): AsyncGenerator<ChatCompletionChunk, { done: boolean }> {
    const timer = new Deadline();
    const controller = new RequestAbort();
    const stopFollowing = cancellation.onAbort((reason) => controller.abort(reason));
    timer.arm(controller, 'first byte', this.options.firstByteTimeoutMs);
    let response: Dispatcher.ResponseData | undefined;
    /** After `[DONE]` the rest of the body is read in the background, which then owns the body and the timer. */
    let draining = false;
    try {
      response = await this.send(`${this.apiBase}/chat/completions`, 'POST', body, controller, {
        accept: 'text/event-stream',
      });
      if (response.statusCode !== 200)
        throw statusError(
          this.options.engine,
          response.statusCode,
          await readLimited(response.body),
          headerValue(response, 'retry-after'),
          this.options.modelLabel,
        );
      if (headerValue(response, 'content-type')?.includes('application/json')) {
        yield (await response.body.json()) as ChatCompletionChunk;
        return { done: true };
      }
      const ending = yield* this.events(response.body, timer, controller);
      draining = ending.draining;
      return { done: ending.done };
    } catch (error) {
      throw this.failure(error, controller, cancellation);
    } finally {
      stopFollowing();
      if (!draining) {
        timer.clear();
        response?.body.destroy();
      }
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
    const controller = new RequestAbort();
    timer.arm(controller, 'first byte', timeoutMs);
    try {
      const response = await this.send(url, method, body, controller, {});
      const text = await readLimited(response.body, response.statusCode === 200 ? okLimit : ERROR_BODY_LIMIT);
      return { status: response.statusCode, text, retryAfter: headerValue(response, 'retry-after') };
    } catch (error) {
      throw this.failure(error, controller);
    } finally {
      timer.clear();
    }
  }

  private send(
    url: string,
    method: 'GET' | 'POST',
    body: unknown,
    signal: RequestAbort,
    headers: Record<string, string>,
  ): Promise<Dispatcher.ResponseData> {
    return undici().request(url, {
      method,
      dispatcher: this.agent,
      signal,
      headers: { ...this.headers, ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /**
   * The stream's chunks up to `[DONE]`. The body is read with its iterator rather than
   * `for await`: leaving a `for await` early destroys the body, and a body destroyed before its
   * end builds an AbortError whose stack is formatted, on every request (docs/benchmarks.md:
   * about 6 % of the gateway's CPU). After `[DONE]` the answer is complete and returned at once;
   * the rest is read to the end in the background (`drainInBackground`), which also keeps the
   * connection for the next request, without holding back the reply's last events.
   */
  private async *events(
    body: Dispatcher.ResponseData['body'],
    timer: Deadline,
    controller: RequestAbort,
  ): AsyncGenerator<ChatCompletionChunk, { done: boolean; draining: boolean }> {
    const parser = new SseParser();
    body.setEncoding('utf8');
    const texts = (body as AsyncIterable<string>)[Symbol.asyncIterator]();
    let ended = false;
    try {
      let first = true;
      for (let next = await texts.next(); !next.done; next = await texts.next()) {
        if (first) {
          first = false;
          timer.arm(controller, 'idle', this.options.idleTimeoutMs);
        } else {
          timer.refresh();
        }
        for (const frame of parser.push(next.value)) {
          const chunk = this.chunkOf(frame);
          if (chunk === 'done') {
            ended = true;
            timer.clear();
            drainInBackground(texts, body);
            return { done: true, draining: true };
          }
          // Time our own client takes to read is not the engine's silence.
          timer.waiting = true;
          yield chunk;
          timer.waiting = false;
          timer.refresh();
        }
      }
      ended = true;
    } finally {
      // Left early (the consumer stopped, or a chunk was an error): closing is the cancel.
      if (!ended) await texts.return?.();
    }
    // Engines close right after their last line: a frame without its blank line still counts.
    for (const frame of parser.end()) {
      const chunk = this.chunkOf(frame);
      if (chunk === 'done') return { done: true, draining: false };
      yield chunk;
    }
    return { done: false, draining: false };
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
  private failure(error: unknown, controller: RequestAbort, cancellation?: Cancellation): unknown {
    if (controller.aborted && controller.reason instanceof UpstreamTimeoutError)
      return transportError(this.options.engine, controller.reason);
    if (cancellation?.aborted) return cancellation.reason ?? error;
    return transportError(this.options.engine, error);
  }
}

/**
 * What ends one request to the engine: our time limits, and the caller's cancellation, which it
 * follows. undici takes an EventEmitter for its `signal` (an `abort` event, `aborted`, `reason`);
 * an AbortController would make an AbortSignal per request, an EventTarget whose prototype is
 * swapped, which Node 20 makes and reads slowly (backends/cancellation.ts).
 */
class RequestAbort extends EventEmitter {
  aborted = false;
  reason: unknown;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/** One timer per request, re-armed per phase and refreshed per chunk (Timeout.refresh allocates nothing). */
class Deadline {
  private timer: NodeJS.Timeout | undefined;
  /** The consumer has a chunk and has not asked for the next: the engine is not the one waited on. */
  waiting = false;

  arm(controller: RequestAbort, phase: TimeoutPhase, ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.waiting) this.timer?.refresh();
      else controller.abort(new UpstreamTimeoutError(phase, ms));
    }, ms);
  }

  refresh(): void {
    this.timer?.refresh();
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

async function readLimited(body: Dispatcher.ResponseData['body'], limit = ERROR_BODY_LIMIT): Promise<string> {
  let text = '';
  body.setEncoding('utf8');
  for await (const piece of body as AsyncIterable<string>) {
    text += piece;
    if (text.length >= limit) break;
  }
  return text;
}
