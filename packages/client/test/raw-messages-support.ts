/**
 * The client tests' side of the raw Messages server (useRawMessagesServer in @model-messages/testing): a
 * Client of it, and the scripted answers its handlers send (SSE frames, statuses, stalls).
 * `useRawMessagesClient()` starts the server for a test file, with `client()` to call it.
 */
import type { ServerResponse } from 'node:http';
import { Client, type ClientOptions, type RetryInfo } from '@model-messages/client';
import { useRawMessagesServer, type RawMessagesHandler, type RawMessagesServer } from '@model-messages/testing';

export interface RawMessagesClient extends RawMessagesServer {
  /** A Client of this server with short backoffs; `retries` collects its onRetry calls. */
  client(options?: Partial<ClientOptions>, retries?: RetryInfo[]): Client;
}

export function useRawMessagesClient(): RawMessagesClient {
  const server = useRawMessagesServer();
  return Object.assign(server, {
    client: (options: Partial<ClientOptions> = {}, retries: RetryInfo[] = []) =>
      new Client({
        baseURL: server.baseURL,
        apiKey: 'key-0123456789',
        models: { small: 'small', mid: { id: 'mid', maxOutputTokens: 64_000 }, large: 'large' },
        backoff: { initialMs: 10, maxMs: 40 },
        hooks: { onRetry: (info) => retries.push(info) },
        ...options,
      }),
  });
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
  (input = 20, output = 9): RawMessagesHandler =>
  (response) => {
    openStream(response);
    response.end(start(input) + toolBlock('{"name":"Ada"}') + finish('tool_use', input, output));
  };
/** A tool input cut off by the output budget: `stop_reason: max_tokens`. */
export const truncated =
  (input = 20): RawMessagesHandler =>
  (response) => {
    openStream(response);
    response.end(start(input) + toolBlock('{"name":"A') + finish('max_tokens', input, 512));
  };
/** A stream whose connection breaks after a few events, before message_stop. */
export const cutMidStream: RawMessagesHandler = (response) => {
  openStream(response);
  response.write(start() + toolBlock('{"name":"Ada"}'));
  setTimeout(() => response.destroy(), 20);
};
export const status =
  (code: number, headers: Record<string, string> = {}, type = 'api_error'): RawMessagesHandler =>
  (response) => {
    response.writeHead(code, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify({ type: 'error', error: { type, message: `status ${code}` }, request_id: null }));
  };
export const stall =
  (prefix: string): RawMessagesHandler =>
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
