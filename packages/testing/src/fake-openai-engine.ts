/**
 * A fake OpenAI-compatible engine on loopback that replays recorded replies of one engine kind
 * (fixtures/openai-engines/<kind>/, see its README for where each shape comes from) and records
 * every request it receives, so tests assert both directions of the mapping. It also answers
 * the engines' tokenizer endpoints, and can fail, stall or hang up on request.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeEngineKind = 'vllm' | 'sglang' | 'llama.cpp' | 'ollama' | 'generic';

export interface EngineFixture {
  source: string;
  /** SSE data payloads; a string is written as a raw SSE frame. */
  stream?: unknown[];
  json?: unknown;
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export type EngineReply =
  /** A recorded reply of this engine (`text`), or of another (`vllm/text`). */
  | { fixture: string }
  /**
   * These entries; `done: false` ends the response without `data: [DONE]` (a cut-off stream);
   * `lingerMs` waits that long after `[DONE]` before ending the response, so that a client that
   * hangs up at `[DONE]` instead of reading to the end shows as a disconnect; `holdAfterDone`
   * keeps it open after `[DONE]` until the promise settles (or the client hangs up);
   * `floodAfterDone` writes SSE comments after `[DONE]` until the client hangs up (`floodedCharacters` counts them).
   */
  | { stream: unknown[]; done?: boolean; lingerMs?: number; holdAfterDone?: Promise<unknown>; floodAfterDone?: boolean }
  | { json: unknown }
  | { status: number; body: unknown; headers?: Record<string, string> }
  /** Sends headers and these entries (none: not even headers), then nothing until the client goes away. */
  | { stall: 'before-headers' | 'after-headers'; stream?: unknown[] }
  /** Closes the connection without answering. */
  | { destroy: true };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

const FIXTURES = new URL('../fixtures/openai-engines/', import.meta.url);

export function loadEngineFixture(kind: FakeEngineKind, name: string): EngineFixture {
  const path = name.includes('/') ? name : `${kind}/${name}`;
  return JSON.parse(readFileSync(new URL(`${path}.json`, FIXTURES), 'utf8')) as EngineFixture;
}

export class FakeOpenAiEngine {
  readonly requests: RecordedRequest[] = [];
  /** What the tokenizer endpoints answer. */
  tokenCount = 37;
  /**
   * Paths answered 404 as if not served: a router in front of the engine that forwards only
   * `/v1/*`, or an older llama.cpp without `/apply-template`.
   */
  readonly missingPaths = new Set<string>();
  /**
   * How other paths than chat completions answer instead (the tokenizer endpoints, say): a
   * status and body, or no answer at all until the client goes away.
   */
  readonly pathReplies = new Map<string, { status: number; body: unknown } | { stall: true }>();
  private readonly queue: EngineReply[] = [];
  /** Characters written after `[DONE]` by `floodAfterDone` replies. */
  floodedCharacters = 0;
  private hangups = 0;
  private closed = 0;
  private hangupWaiters: Array<() => void> = [];

  /** `http://127.0.0.1:<port>`, kept from the start so that it stays the same across `close` and `restart`. */
  private address = '';

  private constructor(
    readonly kind: FakeEngineKind,
    private readonly server: Server,
  ) {}

  static async start(kind: FakeEngineKind): Promise<FakeOpenAiEngine> {
    let engine: FakeOpenAiEngine | undefined;
    const server = createServer((request, response) => void engine!.handle(request, response));
    engine = new FakeOpenAiEngine(kind, server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    engine.address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return engine;
  }

  get baseURL(): string {
    return `${this.address}/v1`;
  }

  /** The model the engine lists (its models fixture), which a backend config names. */
  get model(): string {
    const listed = (loadEngineFixture(this.kind, 'models').body as { data: Array<{ id: string }> }).data;
    return listed[0]!.id;
  }

  /**
   * A model of the service's config served by this engine (`openai-compatible`, its kind as the
   * engine), with `backend`'s fields added to the backend and `sizes` replacing the window and the
   * output limit.
   */
  modelConfig(
    id: string,
    backend: Record<string, unknown> = {},
    sizes: { contextWindow?: number; maxOutputTokens?: number } = {},
  ) {
    return {
      id,
      tier: 'mid' as const,
      generation: 'newer' as const,
      contextWindow: sizes.contextWindow ?? 8192,
      maxOutputTokens: sizes.maxOutputTokens ?? 4096,
      backend: {
        type: 'openai-compatible' as const,
        engine: this.kind,
        baseURL: this.baseURL,
        model: this.model,
        ...backend,
      },
    };
  }

  /** Replies for the next chat completions, in order; with none queued, the `text` fixture. */
  reply(...replies: EngineReply[]): void {
    this.queue.push(...replies);
  }

  /** Drops the replies still queued: a caller that did not ask for them leaves none to the next. */
  clearReplies(): void {
    this.queue.length = 0;
  }

  /** The chat completion bodies received, oldest first. */
  chatBodies(): Array<Record<string, unknown>> {
    return this.requests
      .filter((request) => request.path === '/v1/chat/completions')
      .map((request) => request.body as Record<string, unknown>);
  }

  lastChatBody(): Record<string, unknown> {
    const bodies = this.chatBodies();
    if (bodies.length === 0) throw new Error('the fake engine received no chat completion');
    return bodies.at(-1)!;
  }

  /** Chat completions whose client hung up before the reply was complete. */
  get disconnects(): number {
    return this.hangups;
  }

  /** Resolves once `count` chat completions were hung up on. */
  waitForDisconnects(count: number): Promise<void> {
    if (this.hangups >= count) return Promise.resolve();
    return new Promise((resolve) => this.hangupWaiters.push(() => this.hangups >= count && resolve()));
  }

  /** Chat completions whose response is over, answered in full or hung up on. */
  get closedResponses(): number {
    return this.closed;
  }

  /** Resolves once `count` chat completion responses are over, however they ended. */
  waitForClosedResponses(count: number): Promise<void> {
    if (this.closed >= count) return Promise.resolve();
    return new Promise((resolve) => this.hangupWaiters.push(() => this.closed >= count && resolve()));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /**
   * Listens again on the port it had, after `close`: a replica that died (its connections
   * refused meanwhile) and came back, at the address its clients are configured with.
   */
  async restart(): Promise<void> {
    const port = Number(new URL(this.address).port);
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const path = (request.url ?? '/').split('?')[0]!;
    this.requests.push({ method: request.method ?? 'GET', path, headers: request.headers, body });
    if (this.missingPaths.has(path)) return sendJson(response, 404, { detail: 'Not Found' });
    const instead = this.pathReplies.get(path);
    if (instead && 'stall' in instead) return;
    if (instead) return sendJson(response, instead.status, instead.body);
    if (request.method === 'GET' && path === '/v1/models')
      return sendJson(response, 200, loadEngineFixture(this.kind, 'models').body);
    if (request.method === 'POST' && path === '/v1/chat/completions')
      return this.chat(body as Record<string, unknown>, response);
    if (request.method === 'POST' && path === '/tokenize')
      return sendJson(response, 200, this.tokenized(body as Record<string, unknown>));
    if (request.method === 'POST' && path === '/apply-template')
      return sendJson(response, 200, { prompt: chatMlPrompt(body as { messages?: unknown[] }) });
    sendJson(response, 404, {
      error: { message: `${request.method} ${path} is not served by this fake`, type: 'not_found_error' },
    });
  }

  private async chat(body: Record<string, unknown>, response: ServerResponse): Promise<void> {
    response.on('close', () => {
      this.closed += 1;
      if (!response.writableFinished) this.hangups += 1;
      this.hangupWaiters.forEach((wake) => wake());
    });
    const reply = this.queue.shift() ?? { fixture: 'text' };
    if ('destroy' in reply) {
      response.socket?.destroy();
      return;
    }
    if ('stall' in reply) {
      if (reply.stall === 'after-headers') await writeStream(response, reply.stream ?? [], { done: false, end: false });
      return;
    }
    if ('status' in reply) return sendJson(response, reply.status, reply.body, reply.headers);
    if ('json' in reply) return sendJson(response, 200, reply.json);
    if ('stream' in reply) {
      const afterDone = reply.floodAfterDone
        ? () => this.flood(response)
        : reply.holdAfterDone
          ? () => untilClosed(response, reply.holdAfterDone!)
          : undefined;
      return writeStream(response, reply.stream, {
        done: reply.done !== false,
        end: true,
        lingerMs: reply.lingerMs,
        afterDone,
      });
    }
    const fixture = loadEngineFixture(this.kind, reply.fixture);
    if (fixture.status !== undefined) return sendJson(response, fixture.status, fixture.body, fixture.headers);
    if (body.stream === true && fixture.stream) return writeStream(response, fixture.stream, { done: true, end: true });
    if (fixture.json !== undefined) return sendJson(response, 200, fixture.json);
    sendJson(response, 500, {
      error: { message: `fixture ${reply.fixture} has no ${body.stream === true ? 'stream' : 'json'} reply` },
    });
  }

  /** SSE comments, one a turn of the event loop, until the client hangs up (at most 16 MB). */
  private async flood(response: ServerResponse): Promise<void> {
    const line = `: ${'x'.repeat(1021)}\n\n`;
    for (let written = 0; !response.destroyed && written < 16 * 1024 * 1024; written += line.length) {
      if (!response.write(line)) await Promise.race([once(response, 'drain'), once(response, 'close')]);
      this.floodedCharacters += line.length;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** vLLM and SGLang answer {count, max_model_len, tokens}; llama.cpp answers {tokens}. */
  private tokenized(body: Record<string, unknown>): unknown {
    const tokens = Array.from({ length: this.tokenCount }, (_, index) => 1000 + index);
    if (typeof body.content === 'string') return { tokens };
    return { count: this.tokenCount, max_model_len: 8192, tokens, token_strs: null };
  }
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const piece of request) text += String(piece);
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** Until `hold` settles, or the client hangs up first. */
async function untilClosed(response: ServerResponse, hold: Promise<unknown>): Promise<void> {
  await Promise.race([hold, once(response, 'close')]);
}

/**
 * One write per entry, a turn of the event loop apart, so the client sees them arrive one by one;
 * then `data: [DONE]` (unless `done` is false or the last entry is a raw frame) and the end of
 * the response (unless `end` is false: a stall).
 */
async function writeStream(
  response: ServerResponse,
  entries: readonly unknown[],
  options: { done: boolean; end: boolean; lingerMs?: number; afterDone?: () => Promise<void> },
): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.flushHeaders();
  for (const entry of entries) {
    if (response.destroyed) return;
    response.write(typeof entry === 'string' ? `${entry}\n\n` : `data: ${JSON.stringify(entry)}\n\n`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (!options.end) return;
  if (options.done && typeof entries.at(-1) !== 'string') response.write('data: [DONE]\n\n');
  if (options.lingerMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.lingerMs));
  await options.afterDone?.();
  if (!response.destroyed) response.end();
}

/** What llama.cpp's /apply-template returns for a ChatML model. */
function chatMlPrompt(body: { messages?: unknown[] }): string {
  const turns = (body.messages ?? []).map((message) => {
    const { role, content } = message as { role: string; content: unknown };
    return `<|im_start|>${role}\n${typeof content === 'string' ? content : JSON.stringify(content)}<|im_end|>\n`;
  });
  return `${turns.join('')}<|im_start|>assistant\n`;
}
