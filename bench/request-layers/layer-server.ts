/**
 * One layer of the request path, for bench/request-layers.ts: a server that does the work of
 * `POST /v1/messages` up to a given layer, so that the CPU each layer adds can be measured.
 * Every layer answers the same request with a 200 message; all but `app` are plain node:http,
 * and all but `bare` write their replies as the service does (http/reply-batching.ts).
 *
 *   bare      read the body, JSON.parse it, answer a canned reply (bench/bare-server.ts's work)
 *   edge      + request id, API key check, version header, abort-on-disconnect cancellation, and a
 *               reply built from the parsed body (no validation)
 *   validate  + the request schema (zod), model lookup and the endpoint rules
 *   turn      + the rest of the mms path: token count, admission, the turn loop on the scripted
 *               backend, the encoder and the fold (routes/messages/handler.ts)
 *   app       the mms service itself (buildApp: its router, body reader and the real route)
 *
 * Runs as a child process: answers `{cpu: true}` messages with its process.cpuUsage(), tells
 * its parent the port, and exits when the IPC channel closes.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkMessageRules, parseMessageRequest } from '@model-messages/protocol';
import { buildApp, ModelRegistry } from '@model-messages/server';
import { Cancellation } from '../../packages/server/src/backends/cancellation.js';
import { ApiKeyCheck } from '../../packages/server/src/http/auth.js';
import type { ClientKey } from '../../packages/server/src/keys/client-key.js';
import { ReplyBatching } from '../../packages/server/src/http/reply-batching.js';
import { newRequestId } from '../../packages/server/src/http/request-id.js';
import { startRequest } from '../../packages/server/src/observability/tracing.js';
import { assertVersionHeader } from '../../packages/server/src/http/version-header.js';
import { startMessage } from '../../packages/server/src/routes/messages/handler.js';
import { Signer } from '../../packages/server/src/signing/signer.js';
import { MessageFold } from '../../packages/server/src/streaming/message-fold.js';
import { ServiceTools } from '../../packages/server/src/tools/service-tools.js';
import { LAYERS, type Layer } from './layers.js';
import { readBody } from '../read-body.js';
import { scriptedBenchConfig } from '../scripted-bench-config.js';

const [layerArgument, apiKey, modelId] = process.argv.slice(2);
if (!LAYERS.includes(layerArgument as Layer) || apiKey === undefined || modelId === undefined) {
  throw new Error(`usage: layer-server.ts <${LAYERS.join('|')}> <api key> <model id>`);
}
const layer = layerArgument as Layer;

const config = scriptedBenchConfig(apiKey, modelId);
const registry = ModelRegistry.fromConfig(config.models, process.cwd());
const signer = new Signer(randomBytes(32));
const services = {
  registry,
  serverTools: new ServiceTools(config.serverTools, signer),
  maxSteps: config.maxSteps,
  signer,
  unknownFields: config.unknownFields,
};
const keys = new ApiKeyCheck(config.apiKeys);
const batching = new ReplyBatching((error) => console.error('layer-server: writing a reply failed', error));
const CANNED = JSON.stringify({
  id: 'msg_canned',
  type: 'message',
  role: 'assistant',
  model: modelId,
  content: [{ type: 'text', text: 'Summarize the benchmark in one short sentence please.', citations: null }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 9 },
});

/** The same signal wiring as routes/messages/route.ts. */
function abortOnDisconnect(response: ServerResponse): Cancellation {
  const cancellation = new Cancellation();
  response.on('close', () => {
    if (!response.writableFinished) cancellation.abort(new Error('client disconnected'));
  });
  return cancellation;
}

/** A reply shaped like the service's, built from the request without the service's machinery. */
function echoReply(body: { model: string; messages: Array<{ content: unknown }> }): string {
  return JSON.stringify({
    id: newRequestId(),
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [{ type: 'text', text: body.messages[0]?.content, citations: null }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 9 },
  });
}

async function foldedReply(
  body: unknown,
  cancellation: Cancellation,
  request: IncomingMessage,
  requestId: string,
  key: ClientKey,
): Promise<{ text: string; backend: string }> {
  const record = startRequest(requestId, 'POST', request.headers);
  const call = await startMessage(
    body,
    { fault: undefined, sessionId: undefined },
    services,
    cancellation,
    key,
    undefined,
    record,
  );
  const fold = new MessageFold();
  for (let next = await call.events.next(); !next.done; next = await call.events.next())
    for (const event of next.value) fold.apply(event);
  return { text: JSON.stringify(fold.result()), backend: call.backendName() };
}

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body: unknown = JSON.parse(await readBody(request));
  if (layer === 'bare') {
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(CANNED),
    });
    response.end(CANNED);
    return;
  }
  const requestId = newRequestId();
  const key = keys.assertAuthorized(request.headers);
  assertVersionHeader(request.headers);
  const cancellation = abortOnDisconnect(response);
  let reply: { text: string; backend: string };
  if (layer === 'edge') {
    reply = { text: echoReply(body as Parameters<typeof echoReply>[0]), backend: 'scripted' };
  } else if (layer === 'validate') {
    const parsed = parseMessageRequest(body);
    checkMessageRules(parsed, registry.resolve(parsed.model).profile);
    reply = { text: echoReply(parsed as Parameters<typeof echoReply>[0]), backend: 'scripted' };
  } else {
    reply = await foldedReply(body, cancellation, request, requestId, key);
  }
  // As the service writes its replies: together, at the end of the event loop's turn.
  batching.defer(() => {
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(reply.text),
      'request-id': requestId,
      'mms-backend': reply.backend,
    });
    response.end(reply.text);
  });
}

async function listen(): Promise<{ port: number; close: () => Promise<void> }> {
  if (layer === 'app') {
    const app = buildApp({ config, registry });
    await app.listen({ host: '127.0.0.1', port: 0 });
    return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
  }
  const server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

if (process.send === undefined)
  throw new Error(
    'bench/request-layers/layer-server.ts is started by bench/request-layers.ts (it needs an IPC channel)',
  );
const service = await listen();
process.on('message', (message: unknown) => {
  if (typeof message === 'object' && message !== null && 'cpu' in message) process.send?.({ cpu: process.cpuUsage() });
});
process.on('disconnect', () => void service.close().then(() => process.exit(0)));
process.send({ port: service.port });
