/**
 * Small raw node:http servers that stand in for an upstream when a test needs an exact failure:
 * a given status and body, an SSE stream that stops or errors at a chosen point, a stream that
 * never ends (to see the connection close), or a port where nothing listens.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scriptedModels } from './start-service.js';

export interface RawUpstream {
  baseURL: string;
  /** Every request received: method, path, headers and JSON body. */
  requests: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: unknown }>;
  close(): Promise<void>;
}

export type RawHandler = (request: IncomingMessage, response: ServerResponse, body: unknown) => void;

export async function rawUpstream(handler: RawHandler): Promise<RawUpstream> {
  const requests: RawUpstream['requests'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body: unknown = text === '' ? undefined : JSON.parse(text);
      requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An address where nothing listens: a server is started, its port noted, and closed. */
export async function closedPortURL(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A raw upstream's answer to count_tokens, for handlers that only care about messages. */
export function answerCount(request: IncomingMessage, response: ServerResponse): boolean {
  if (request.url !== '/v1/messages/count_tokens') return false;
  response.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":7}');
  return true;
}

/** One wire event's data: its type and its fields. */
export interface WireEvent {
  type: string;
  [field: string]: unknown;
}

/** Writes SSE frames for these event data objects (the event name is each one's type). */
export function sseFrames(events: readonly WireEvent[]): string {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

export function errorEnvelope(
  type: string,
  message: string,
): { type: 'error'; error: { type: string; message: string }; request_id: string } {
  return { type: 'error', error: { type, message }, request_id: 'req_upstream' };
}

/** The opening of an upstream reply: message_start and an open text block with one delta. */
export function streamOpening(text: string): WireEvent[] {
  return [
    {
      type: 'message_start',
      message: {
        id: 'msg_up',
        type: 'message',
        role: 'assistant',
        model: 'up',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 3, output_tokens: 0 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
  ];
}

/** A whole upstream reply of one text block. */
export function streamOf(text: string): WireEvent[] {
  return [
    ...streamOpening(text),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } },
    { type: 'message_stop' },
  ];
}

/** The testing kit's six scripted models, each served by this backend config instead. */
export function modelsWithBackend(backend: Record<string, unknown>): ReturnType<typeof scriptedModels> {
  return scriptedModels().map((model) => ({ ...model, backend: backend as never }));
}
