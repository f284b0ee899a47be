/**
 * The engine replicas of bench/replica-replay.ts (issue 36), in one child process: each an
 * OpenAI-compatible server on loopback that behaves, in time, like a prefix-caching engine.
 *
 * - Its cache (prefix-cache.ts) holds `capacityTokens`; a request reuses its longest cached run
 *   of first blocks and reports it as `usage.prompt_tokens_details.cached_tokens`, as vLLM does.
 * - Prefill is the engine's compute: one prompt at a time per replica, each taking
 *   `prefillOverheadMs` plus `prefillMicrosecondsPerToken` for every token not cached, so that a
 *   replica sent more than its share queues its requests, and a cache miss costs every request
 *   behind it. The first token follows its prefill.
 * - Decoding is batched: `outputTokens` tokens at `decodeMillisecondsPerToken` each, written in
 *   chunks of 8 tokens, each chunk on its own, whatever else the replica runs.
 * - For the ideal (each conversation on an engine of its own, with room for all of it), every
 *   request is also looked up in an unbounded cache of its conversation's own, named by its first
 *   user turn.
 *
 * The parent sends `settings`, then `reset` (empty caches and counts; every replica listening),
 * `kill` (a replica stops: its connections and requests in flight cut, new ones refused) and
 * `stats`; each is answered with a message of the same type.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../read-body.js';
import {
  ENGINE_MODEL,
  type EngineCommand,
  type EngineSettings,
  type EngineStats,
  type ReplicaStats,
} from './engine-commands.js';
import { blockNames, PrefixCache, promptTokens, renderedPrompt, type ChatBody } from './prefix-cache.js';

const CHUNK_TOKENS = 8;
const MAX_MODEL_LEN = 262_144;

class Replica {
  readonly cache: PrefixCache;
  stats: ReplicaStats = emptyStats();
  /** When its prefill is free again (performance.now()). */
  private prefillFreeAt = 0;
  private inFlight = 0;
  private changedAt = performance.now();
  private readonly open = new Set<ServerResponse>();
  port = 0;

  constructor(
    readonly server: Server,
    private readonly settings: EngineSettings,
  ) {
    this.cache = new PrefixCache(settings.capacityTokens);
  }

  reset(): void {
    this.cache.clear();
    this.stats = emptyStats();
    this.prefillFreeAt = 0;
    this.changedAt = performance.now();
  }

  /** The cut of a replica that died: every response in flight ends unfinished. */
  cutAll(): void {
    for (const response of this.open) response.destroy();
  }

  async complete(body: ChatBody & { stream?: unknown }, response: ServerResponse): Promise<void> {
    this.enter(response);
    try {
      const prompt = renderedPrompt(body);
      const names = blockNames(prompt);
      const tokens = promptTokens(prompt);
      const cached = Math.min(this.cache.reuse(names), tokens - 1);
      ideal.cachedTokens += Math.min(idealCacheOf(body).reuse(names), tokens - 1);
      const prefillMs =
        this.settings.prefillOverheadMs + ((tokens - cached) * this.settings.prefillMicrosecondsPerToken) / 1000;
      const start = Math.max(performance.now(), this.prefillFreeAt);
      this.prefillFreeAt = start + prefillMs;
      this.stats.requests += 1;
      this.stats.promptTokens += tokens;
      this.stats.cachedTokens += cached;
      await until(this.prefillFreeAt);
      if (response.destroyed) return;
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      write(response, { role: 'assistant', content: '' });
      for (let sent = 0; sent < this.settings.outputTokens; sent += CHUNK_TOKENS) {
        if (sent > 0) await delay(CHUNK_TOKENS * this.settings.decodeMillisecondsPerToken);
        if (response.destroyed) return;
        write(response, { content: 'word '.repeat(Math.min(CHUNK_TOKENS, this.settings.outputTokens - sent)) });
      }
      write(response, {}, 'stop');
      response.write(
        `data: ${JSON.stringify({
          id: 'chatcmpl-replay',
          object: 'chat.completion.chunk',
          model: ENGINE_MODEL,
          choices: [],
          usage: {
            prompt_tokens: tokens,
            completion_tokens: this.settings.outputTokens,
            total_tokens: tokens + this.settings.outputTokens,
            prompt_tokens_details: { cached_tokens: cached },
          },
        })}\n\ndata: [DONE]\n\n`,
      );
      response.end();
    } finally {
      this.leave(response);
    }
  }

  private enter(response: ServerResponse): void {
    this.count();
    this.inFlight += 1;
    this.open.add(response);
  }

  private leave(response: ServerResponse): void {
    this.count();
    this.inFlight -= 1;
    this.open.delete(response);
  }

  /** Adds the time since the last change, at the count of requests in flight during it. */
  private count(): void {
    const now = performance.now();
    this.stats.inFlightSeconds += (this.inFlight * (now - this.changedAt)) / 1000;
    this.changedAt = now;
  }
}

function emptyStats(): ReplicaStats {
  return { requests: 0, promptTokens: 0, cachedTokens: 0, inFlightSeconds: 0 };
}

const ideal = { cachedTokens: 0, caches: new Map<string, PrefixCache>() };

/** The conversation's own unbounded cache, named by its first user turn. */
function idealCacheOf(body: ChatBody): PrefixCache {
  const firstUser = body.messages.find((message) => message.role === 'user');
  const name = JSON.stringify(firstUser?.content ?? '');
  let cache = ideal.caches.get(name);
  if (cache === undefined) {
    cache = new PrefixCache(Number.POSITIVE_INFINITY);
    ideal.caches.set(name, cache);
  }
  return cache;
}

function write(response: ServerResponse, delta: Record<string, unknown>, finish: string | null = null): void {
  response.write(
    `data: ${JSON.stringify({
      id: 'chatcmpl-replay',
      object: 'chat.completion.chunk',
      model: ENGINE_MODEL,
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`,
  );
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function until(time: number): Promise<void> {
  return delay(Math.max(0, time - performance.now()));
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

async function handle(replica: Replica, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (request.method === 'GET' && path === '/v1/models')
    return sendJson(response, 200, {
      object: 'list',
      data: [{ id: ENGINE_MODEL, object: 'model', max_model_len: MAX_MODEL_LEN }],
    });
  if (request.method !== 'POST') return sendJson(response, 404, { error: { message: `${path} is not served` } });
  const body = JSON.parse(await readBody(request)) as ChatBody & { stream?: unknown };
  // vLLM's tokenizer endpoint: the chat messages and tools, counted as the cache counts them.
  if (path === '/tokenize')
    return sendJson(response, 200, { count: promptTokens(renderedPrompt(body)), max_model_len: MAX_MODEL_LEN });
  if (path !== '/v1/chat/completions') return sendJson(response, 404, { error: { message: `${path} is not served` } });
  await replica.complete(body, response);
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

let replicas: Replica[] = [];

async function command(message: EngineCommand): Promise<unknown> {
  switch (message.type) {
    case 'settings': {
      replicas = Array.from({ length: message.settings.replicas }, () => {
        let replica: Replica | undefined;
        const server = createServer((request, response) => void handle(replica!, request, response));
        server.keepAliveTimeout = 60_000;
        replica = new Replica(server, message.settings);
        return replica;
      });
      for (const replica of replicas) replica.port = await listen(replica.server, 0);
      return { type: 'settings', ports: replicas.map((replica) => replica.port) };
    }
    case 'reset':
      for (const replica of replicas) {
        replica.reset();
        if (!replica.server.listening) await listen(replica.server, replica.port);
      }
      ideal.cachedTokens = 0;
      ideal.caches.clear();
      return { type: 'reset' };
    case 'kill': {
      const replica = replicas[message.replica]!;
      replica.server.close();
      replica.server.closeAllConnections();
      replica.cutAll();
      return { type: 'kill' };
    }
    case 'stats':
      return {
        type: 'stats',
        stats: {
          replicas: replicas.map((replica) => replica.stats),
          idealCachedTokens: ideal.cachedTokens,
        } satisfies EngineStats,
      };
    default:
      return message satisfies never;
  }
}

if (process.send === undefined)
  throw new Error('bench/replica-replay/engine-replicas.ts is started by bench/replica-replay.ts');
process.on('message', (message: EngineCommand) => {
  void command(message).then((answer) => process.send?.(answer));
});
process.on('disconnect', () => process.exit(0));
