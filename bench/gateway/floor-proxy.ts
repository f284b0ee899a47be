/**
 * The floor of bench/gateway.ts: the least a Messages gateway written in Node can do per request,
 * to show how much of what mms adds any such gateway on this host pays. It takes
 * `POST /v1/messages`, JSON.parses the body, sends the engine a chat completion built from it
 * (streamed, as mms asks; undici, as mms uses), reads the engine's SSE chunks (line ends found by
 * indexOf, each chunk JSON.parsed) and answers Messages: one JSON body, or, for `stream: true`,
 * the events mms writes (message_start, a text block's start, one delta per content chunk, its
 * stop, message_delta, message_stop), each written as its chunk arrives.
 *
 * What it leaves out, and mms does: auth, the version header, validating the request, limits,
 * the model's admission, the prompt's size, time limits, stop sequences, tool calls, errors
 * mapped to the contract, the access log and metrics. Runs as a child process: gets the engine's
 * address as its arguments, tells its parent its port over IPC, and exits when the channel closes.
 *
 *   floor-proxy.ts <engine base URL> <engine model> [undici-dispatch|undici-request|node-http] [stream|json]
 *
 * The third argument is how it asks the engine (undici's dispatch is what mms uses, and the
 * cheapest of the three here); `json` as the fourth asks the engine for one JSON reply when the
 * client wants one (mms always streams from the engine: its time limits, stop sequences and
 * leaked tool calls read the stream).
 */
import {
  Agent as HttpAgent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import { serveToParent } from '../child-server.js';
import { readBody } from '../read-body.js';

const [engineBaseURL, engineModel, clientName = 'undici-dispatch', engineReplies = 'stream'] = process.argv.slice(2);
if (engineBaseURL === undefined || engineModel === undefined)
  throw new Error('floor-proxy.ts takes the engine base URL and model');

const agent = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
const chatURL = `${engineBaseURL}/chat/completions`;
const chatTarget = new URL(chatURL);
const nodeAgent = new HttpAgent({ keepAlive: true, maxSockets: 64 });
const engineHeaders = {
  'content-type': 'application/json',
  accept: 'text/event-stream',
  authorization: 'Bearer bench-engine-key',
};

interface MessagesRequest {
  model: string;
  max_tokens: number;
  stream?: boolean;
  messages: Array<{ role: string; content: string }>;
}

interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
}

let nextId = 0;

/** The engine's body as pieces: three ways a Node gateway can ask, the arm picks one. */
type EngineBody = AsyncIterable<Buffer>;

const CLIENTS: Record<string, (chatBody: string) => Promise<EngineBody>> = {
  'undici-request': async (chatBody) => {
    const engine = await undiciRequest(chatURL, {
      dispatcher: agent,
      method: 'POST',
      headers: engineHeaders,
      body: chatBody,
    });
    return engine.body as AsyncIterable<Buffer>;
  },
  'node-http': (chatBody) =>
    new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        {
          agent: nodeAgent,
          host: chatTarget.hostname,
          port: chatTarget.port,
          path: chatTarget.pathname,
          method: 'POST',
          headers: { ...engineHeaders, 'content-length': Buffer.byteLength(chatBody) },
        },
        resolve,
      );
      outgoing.on('error', reject);
      outgoing.end(chatBody);
    }),
  'undici-dispatch': (chatBody) =>
    new Promise((resolve, reject) => {
      agent.dispatch(
        {
          origin: chatTarget.origin,
          path: chatTarget.pathname,
          method: 'POST',
          headers: engineHeaders,
          body: chatBody,
        },
        new PiecesHandler(resolve, reject),
      );
    }),
};

/** undici's dispatch handler, the pieces handed on through one small async queue. */
class PiecesHandler implements Dispatcher.DispatchHandler {
  private readonly pieces: Buffer[] = [];
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly started: (body: EngineBody) => void,
    private readonly failed: (error: Error) => void,
  ) {}

  /** Its presence tells undici the handler speaks the controller API (undici 7). */
  onRequestStart(): void {}

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    if (statusCode !== 200) this.failed(new Error(`engine answered ${statusCode}`));
    else this.started(this.read());
  }

  onResponseData(_controller: Dispatcher.DispatchController, piece: Buffer): void {
    this.pieces.push(piece);
    this.wake?.();
  }

  onResponseEnd(): void {
    this.ended = true;
    this.wake?.();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.failure = error;
    this.failed(error);
    this.wake?.();
  }

  private async *read(): EngineBody {
    for (;;) {
      const piece = this.pieces.shift();
      if (piece !== undefined) {
        yield piece;
        continue;
      }
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

const askEngine = CLIENTS[clientName] ?? noClient();

function noClient(): never {
  throw new Error(`floor-proxy.ts: no client ${clientName}; one of ${Object.keys(CLIENTS).join(', ')}`);
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method !== 'POST' || request.url !== '/v1/messages') {
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end('{"type":"error","error":{"type":"not_found_error","message":"not served"}}');
    return;
  }
  const body = JSON.parse(await readBody(request)) as MessagesRequest;
  const streamed = body.stream === true;
  if (!streamed && engineReplies === 'json') return answerFromJson(body, response);
  const chatBody = JSON.stringify({
    model: engineModel,
    messages: body.messages,
    max_tokens: body.max_tokens,
    stream: true,
    stream_options: { include_usage: true },
  });
  const engineBody = await askEngine(chatBody);
  const id = `msg_floor${(nextId++).toString(36)}`;
  if (streamed) {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  }
  let text = '';
  let stopReason = 'end_turn';
  let inputTokens = 0;
  let outputTokens = 0;
  let started = false;
  let pending = '';
  const event = (name: string, data: unknown): void => {
    response.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  for await (const piece of engineBody) {
    pending += piece.toString('utf8');
    for (let end = pending.indexOf('\n\n'); end !== -1; end = pending.indexOf('\n\n')) {
      const frame = pending.slice(0, end);
      pending = pending.slice(end + 2);
      const data = frame.startsWith('data: ') ? frame.slice(6) : frame;
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data) as ChatChunk;
      if (streamed && !started) {
        started = true;
        event('message_start', {
          type: 'message_start',
          message: {
            id,
            type: 'message',
            role: 'assistant',
            model: body.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 0, output_tokens: 0 },
          },
        });
        event('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        });
      }
      const choice = chunk.choices?.[0];
      const delta = choice?.delta?.content;
      if (typeof delta === 'string' && delta.length > 0) {
        text += delta;
        if (streamed)
          event('content_block_delta', {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'text_delta', text: delta },
          });
      }
      if (choice?.finish_reason === 'length') stopReason = 'max_tokens';
      if (chunk.usage) {
        inputTokens = chunk.usage.prompt_tokens;
        outputTokens = chunk.usage.completion_tokens;
      }
    }
  }
  const usage = { input_tokens: inputTokens, output_tokens: outputTokens };
  if (streamed) {
    event('content_block_stop', { type: 'content_block_stop', index: 0 });
    event('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage });
    event('message_stop', { type: 'message_stop' });
    response.end();
    return;
  }
  answerJson(response, id, body.model, text, stopReason, usage);
}

function answerJson(
  response: ServerResponse,
  id: string,
  model: string,
  text: string,
  stopReason: string,
  usage: { input_tokens: number; output_tokens: number },
): void {
  const reply = JSON.stringify({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  });
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
  response.end(reply);
}

/** A client that wants one JSON reply, the engine asked for one JSON reply too: no SSE at all. */
async function answerFromJson(body: MessagesRequest, response: ServerResponse): Promise<void> {
  const engineBody = await askEngine(
    JSON.stringify({ model: engineModel, messages: body.messages, max_tokens: body.max_tokens }),
  );
  let received = '';
  for await (const piece of engineBody) received += piece.toString('utf8');
  const completion = JSON.parse(received) as {
    choices: Array<{ message: { content: string | null }; finish_reason: string | null }>;
    usage: { prompt_tokens: number; completion_tokens: number };
  };
  const choice = completion.choices[0];
  answerJson(
    response,
    `msg_floor${(nextId++).toString(36)}`,
    body.model,
    choice?.message.content ?? '',
    choice?.finish_reason === 'length' ? 'max_tokens' : 'end_turn',
    { input_tokens: completion.usage.prompt_tokens, output_tokens: completion.usage.completion_tokens },
  );
}

const server = createServer((request, response) => {
  handle(request, response).catch((error: unknown) => {
    console.error(`floor-proxy (${clientName}):`, error);
    response.destroy(error instanceof Error ? error : new Error(String(error)));
  });
});
server.keepAliveTimeout = 60_000;
serveToParent('bench/gateway/floor-proxy.ts', server);
