/**
 * A raw HTTP server that answers the client's requests with scripted handlers, for what the real
 * service cannot be made to do on cue: exact statuses and headers, error events, streams that
 * stall or break, exact stop reasons and usage. `useRawMessagesServer()` starts it for a test
 * file and empties its record before each test.
 */
import { after, before, beforeEach } from 'node:test';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, type ClientOptions, type RetryInfo } from '@mms/client';

export type Handler = (response: ServerResponse, body: Record<string, unknown>) => void;

export interface RawMessagesServer {
  baseURL: string;
  /** The n-th request gets the n-th handler; the last one answers every request after it. */
  handlers: Handler[];
  bodies: Array<Record<string, unknown>>;
  requestHeaders: IncomingMessage['headers'][];
  /** A Client of this server with short backoffs; `retries` collects its onRetry calls. */
  client(options?: Partial<ClientOptions>, retries?: RetryInfo[]): Client;
}

export function useRawMessagesServer(): RawMessagesServer {
  let server: Server;
  const fake: RawMessagesServer = {
    baseURL: '',
    handlers: [],
    bodies: [],
    requestHeaders: [],
    client: (options = {}, retries = []) =>
      new Client({
        baseURL: fake.baseURL,
        apiKey: 'key-0123456789',
        models: { small: 'small', mid: { id: 'mid', maxOutputTokens: 64_000 }, large: 'large' },
        backoff: { initialMs: 10, maxMs: 40 },
        hooks: { onRetry: (info) => retries.push(info) },
        ...options,
      }),
  };
  before(async () => {
    server = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk));
      request.on('end', () => {
        const index = fake.bodies.length;
        fake.bodies.push(JSON.parse(text) as Record<string, unknown>);
        fake.requestHeaders.push(request.headers);
        response.setHeader('request-id', `req_${index + 1}`);
        (fake.handlers[Math.min(index, fake.handlers.length - 1)] ?? ((res) => res.end()))(
          response,
          fake.bodies[index]!,
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake.baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    fake.bodies = [];
    fake.requestHeaders = [];
    fake.handlers = [];
  });
  return fake;
}

export const usage = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  server_tool_use: null,
});
export const frame = (event: { type: string; [field: string]: unknown }) =>
  `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
export const start = (input = 20) =>
  frame({
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'mid',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usage(input, 1),
    },
  });
export const toolBlock = (json: string) =>
  frame({
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'tool_use', id: 'toolu_1', name: 'record_answer', input: {} },
  }) +
  frame({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: json } }) +
  frame({ type: 'content_block_stop', index: 0 });
export const finish = (stopReason: string, input: number, output: number) =>
  frame({
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: usage(input, output),
  }) + frame({ type: 'message_stop' });
export const errorEvent = (type: string) => frame({ type: 'error', error: { type, message: `${type} injected` } });

export function openStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
}
export const answer =
  (input = 20, output = 9): Handler =>
  (response) => {
    openStream(response);
    response.end(start(input) + toolBlock('{"name":"Ada"}') + finish('tool_use', input, output));
  };
export const status =
  (code: number, headers: Record<string, string> = {}, type = 'api_error'): Handler =>
  (response) => {
    response.writeHead(code, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify({ type: 'error', error: { type, message: `status ${code}` }, request_id: null }));
  };
export const stall =
  (prefix: string): Handler =>
  (response) => {
    openStream(response);
    response.write(prefix);
  };

export const schema = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
  additionalProperties: false,
};
// Transport is the subject of these tests: the schema as given, without the Insufficient data envelope.
export const ask = { schema, instructions: 'Extract.', input: 'Ada', maxTokens: 512, insufficientData: false };
