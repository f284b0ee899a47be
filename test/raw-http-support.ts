/**
 * Raw sockets against the service, for what no HTTP client sends on purpose: a request without
 * Host, an Expect other than 100-continue, CONNECT, oversized or trickled headers, a client that
 * stops reading or never sends a byte. The reply is read to the connection's end and split into
 * status, headers and the error envelope.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import type { RunningService } from '@model-messages/testing';

export interface RawReply {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

export interface ErrorEnvelopeBody {
  type: string;
  error: { type: string; message: string };
  request_id: string;
}

/** A connected socket to the service, not yet written to. */
export async function openSocket(service: RunningService): Promise<Socket> {
  const socket = connect(Number(new URL(service.baseURL).port), '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

/**
 * Everything the service sends on `socket` until the connection closes. A reset (the service
 * destroyed a connection with bytes still unread) ends it as a close does.
 */
export async function readUntilClosed(socket: Socket): Promise<string> {
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (piece: string) => (text += piece));
  socket.on('error', () => undefined);
  // A socket paused on purpose stays paused when a 'data' listener is added.
  socket.resume();
  // Not events.once(socket, 'close'), which rejects on the 'error' before it: a write that fails
  // (EPIPE) once the service closed is no failure of the reply.
  if (!socket.destroyed) await new Promise((closed) => socket.once('close', closed));
  return text;
}

/** Writes `request` on a fresh connection and reads the reply to the connection's end. */
export async function rawExchange(service: RunningService, request: string): Promise<RawReply> {
  const socket = await openSocket(service);
  const reading = readUntilClosed(socket);
  socket.write(request);
  return parseReply(await reading);
}

export function parseReply(text: string): RawReply {
  const headEnd = text.indexOf('\r\n\r\n');
  assert.ok(headEnd > 0, `no reply head in ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine = '', ...lines] = text.slice(0, headEnd).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(headEnd + 4) };
}

/**
 * The reply is an error in the envelope: its status, `mms-error-code`, and a request-id in the
 * header that the body repeats. Returns the envelope.
 */
export function assertEnvelope(reply: RawReply, status: number, code: string): ErrorEnvelopeBody {
  assert.equal(reply.status, status, reply.body);
  assert.equal(reply.headers['mms-error-code'], code);
  assert.match(reply.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(reply.body) as ErrorEnvelopeBody;
  assert.equal(body.type, 'error');
  assert.match(body.request_id, /^req_/);
  assert.equal(reply.headers['request-id'], body.request_id);
  return body;
}

/** The head of an authorized request, without its final blank line. */
export function requestHead(service: RunningService, method: string, path: string, extra: string[] = []): string {
  return [
    `${method} ${path} HTTP/1.1`,
    'host: mms',
    `x-api-key: ${service.apiKey}`,
    'anthropic-version: 2023-06-01',
    ...extra,
  ].join('\r\n');
}
