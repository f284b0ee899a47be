/**
 * The engine every arm of bench/gateway.ts reaches: a minimal OpenAI-compatible server on
 * loopback that answers every chat completion with one fixed reply, recorded from vLLM
 * (packages/testing/fixtures/openai-engines/vllm/text.json): the JSON body when the request has
 * no `stream: true`, otherwise the fixture's six SSE chunks (role, three content deltas, finish,
 * usage) and `data: [DONE]`. The bytes are serialised once at start, with no delay, so the engine
 * costs as little as a server that reads and parses the body can. A stream's chunks are written
 * each on its own, a turn of the event loop apart, as a real engine sends each as it generates it
 * (issue 36: written in one piece, the gateway read the whole stream in one read, which no real
 * engine gives it); `together` as the first argument writes them in one piece, as the bench did
 * before.
 * It also answers `GET /v1/models` (mms's start-up check) and, as vLLM does, `POST /tokenize`
 * with the chat messages (what mms's default settings ask for count_tokens and for a prompt near
 * the context window; `countTokens: "every-request"` before every request): the body parsed, the
 * fixture's prompt count answered. Runs as a child process: tells its parent the port and the
 * model it serves over IPC, and exits when the channel closes.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { serveToParent } from '../child-server.js';
import { readBody } from '../read-body.js';

interface VllmFixture {
  stream: unknown[];
  json: unknown;
}

const FIXTURE_FOLDER = new URL('../../packages/testing/fixtures/openai-engines/vllm/', import.meta.url);

function readFixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURE_FOLDER), 'utf8')) as unknown;
}

const text = readFixture('text') as VllmFixture;
const models = (readFixture('models') as { body: unknown }).body;

/** The model name the engine serves, which every gateway's config names. */
const ENGINE_MODEL = ((models as { data: Array<{ id: string }> }).data[0] ?? { id: 'missing' }).id;

const JSON_REPLY = Buffer.from(JSON.stringify(text.json));
/** The stream's frames: each chunk, then `[DONE]`. */
const STREAM_FRAMES = [...text.stream.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), 'data: [DONE]\n\n'].map(
  (frame) => Buffer.from(frame),
);
const STREAM_REPLY = Buffer.concat(STREAM_FRAMES);
const CHUNKS: 'apart' | 'together' = process.argv[2] === 'together' ? 'together' : 'apart';
const MODELS_REPLY = Buffer.from(JSON.stringify(models));
/** vLLM's TokenizeResponse: the count, the window, the token ids. */
const PROMPT_TOKENS = (text.json as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
const TOKENIZE_REPLY = Buffer.from(
  JSON.stringify({
    count: PROMPT_TOKENS,
    max_model_len: 8192,
    tokens: Array.from({ length: PROMPT_TOKENS }, (_, index) => 1000 + index),
  }),
);

function send(response: ServerResponse, status: number, contentType: string, body: Buffer): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': body.length });
  response.end(body);
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (request.method === 'GET' && path === '/v1/models') return send(response, 200, 'application/json', MODELS_REPLY);
  if (request.method === 'POST' && path === '/tokenize') return tokenize(request, response);
  if (request.method !== 'POST' || path !== '/v1/chat/completions') {
    return send(
      response,
      404,
      'application/json',
      Buffer.from(`{"error":{"message":"${request.method} ${path} is not served by the bench engine"}}`),
    );
  }
  let parsed: { stream?: unknown; messages?: unknown };
  try {
    // Parsed, as a real engine must, so that the direct arm pays for the same JSON work.
    parsed = JSON.parse(await readBody(request)) as { stream?: unknown; messages?: unknown };
  } catch {
    return send(response, 400, 'application/json', Buffer.from('{"error":{"message":"unreadable JSON"}}'));
  }
  if (!Array.isArray(parsed.messages))
    return send(response, 400, 'application/json', Buffer.from('{"error":{"message":"messages is required"}}'));
  if (parsed.stream !== true) return send(response, 200, 'application/json', JSON_REPLY);
  if (CHUNKS === 'together') return send(response, 200, 'text/event-stream', STREAM_REPLY);
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const frame of STREAM_FRAMES) {
    if (response.destroyed) return;
    response.write(frame);
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

async function tokenize(request: IncomingMessage, response: ServerResponse): Promise<void> {
  let parsed: { messages?: unknown };
  try {
    parsed = JSON.parse(await readBody(request)) as { messages?: unknown };
  } catch {
    return send(response, 400, 'application/json', Buffer.from('{"error":{"message":"unreadable JSON"}}'));
  }
  if (!Array.isArray(parsed.messages))
    return send(response, 400, 'application/json', Buffer.from('{"error":{"message":"messages is required"}}'));
  send(response, 200, 'application/json', TOKENIZE_REPLY);
}

const server = createServer((request, response) => void handle(request, response));
server.keepAliveTimeout = 60_000;
serveToParent('bench/gateway/fake-engine.ts', server, { model: ENGINE_MODEL });
