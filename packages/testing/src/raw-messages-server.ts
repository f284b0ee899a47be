/**
 * A raw HTTP server in place of a Messages service, for what the real service cannot be made to
 * do on cue: exact statuses and headers, error events, streams that stall or break, exact stop
 * reasons and usage. Each request gets a scripted handler; `useRawMessagesServer()` starts it for
 * a test file and empties its record before each test.
 */
import { after, before, beforeEach } from 'node:test';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Answers one request, given its JSON body. */
export type RawMessagesHandler = (response: ServerResponse, body: Record<string, unknown>) => void;

export interface RawMessagesServer {
  baseURL: string;
  /** The n-th request gets the n-th handler; the last one answers every request after it. */
  handlers: RawMessagesHandler[];
  bodies: Array<Record<string, unknown>>;
  requestHeaders: IncomingMessage['headers'][];
}

export function useRawMessagesServer(): RawMessagesServer {
  let server: Server;
  const fake: RawMessagesServer = {
    baseURL: '',
    handlers: [],
    bodies: [],
    requestHeaders: [],
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
