/**
 * What node:http would answer on its own, bare or not at all, is answered in the envelope with
 * a request-id and mms-error-code like every other error (issue 16, case 9): an Expect other
 * than 100-continue, an HTTP/1.1 request without Host, CONNECT, headers over 16 KB, and headers
 * that trickle past listen.headersTimeoutMs (a slowloris client).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type RunningService } from '@model-messages/testing';
import {
  assertEnvelope,
  openSocket,
  parseReply,
  rawExchange,
  readUntilClosed,
  requestHead,
} from './raw-http-support.js';

let service: RunningService;
before(async () => {
  service = await startService({ listen: { headersTimeoutMs: 200, requestTimeoutMs: 5_000 } });
});
after(() => service.close());

const body = JSON.stringify({ model: 'mid', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });

describe("node:http's own refusals, in the envelope", () => {
  test('an Expect other than 100-continue is a 417 naming the header', async () => {
    const reply = await rawExchange(
      service,
      `${requestHead(service, 'POST', '/v1/messages', ['content-type: application/json', `content-length: ${body.length}`, 'expect: 200-ok', 'connection: close'])}\r\n\r\n${body}`,
    );
    const envelope = assertEnvelope(reply, 417, 'expectation_failed');
    assert.equal(envelope.error.type, 'invalid_request_error');
    assert.match(envelope.error.message, /^expect: only 100-continue/);
  });

  test('Expect: 100-continue is still honoured, and the request answered', async () => {
    const reply = await rawExchange(
      service,
      `${requestHead(service, 'POST', '/v1/messages', ['content-type: application/json', `content-length: ${body.length}`, 'expect: 100-continue', 'connection: close'])}\r\n\r\n${body}`,
    );
    // The interim 100 comes first; the final reply follows it.
    assert.equal(reply.status, 100);
    assert.equal(parseReply(reply.body).status, 200);
  });

  test('an HTTP/1.1 request without Host is a 400 naming the header, and its connection closes', async () => {
    const reply = await rawExchange(
      service,
      `GET /health HTTP/1.1\r\nx-api-key: ${service.apiKey}\r\nanthropic-version: 2023-06-01\r\n\r\n`,
    );
    const envelope = assertEnvelope(reply, 400, 'invalid_request');
    assert.match(envelope.error.message, /^host: /);
    assert.equal(reply.headers.connection, 'close');
  });

  test('an HTTP/1.0 request needs no Host', async () => {
    const reply = await rawExchange(service, 'GET /health HTTP/1.0\r\n\r\n');
    assert.equal(reply.status, 200);
  });

  test('CONNECT is a 405 that names the allowed methods, and its connection closes', async () => {
    const reply = await rawExchange(service, 'CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n');
    const envelope = assertEnvelope(reply, 405, 'method_not_allowed');
    assert.match(envelope.error.message, /not a proxy/);
    assert.equal(reply.headers.allow, 'GET, HEAD, POST');
    assert.equal(reply.headers.connection, 'close');
  });

  test('headers over 16 KB are a 431', async () => {
    const reply = await rawExchange(
      service,
      `${requestHead(service, 'GET', '/health', [`x-padding: ${'a'.repeat(20_000)}`])}\r\n\r\n`,
    );
    assertEnvelope(reply, 431, 'headers_too_large');
  });
});

describe('slow headers', () => {
  test('headers trickled past headersTimeoutMs are a 408 naming the limit, and the connection closes', async () => {
    const socket = await openSocket(service);
    const reading = readUntilClosed(socket);
    socket.write('POST /v1/messages HTTP/1.1\r\nhost: mms\r\n');
    // A header line every 20 ms, for as long as the connection stays open: never the blank line.
    const trickle = setInterval(() => socket.writable && socket.write('x-trickle: 1\r\n'), 20);
    try {
      const envelope = assertEnvelope(parseReply(await reading), 408, 'request_timeout');
      assert.equal(envelope.error.type, 'timeout_error');
      assert.match(envelope.error.message, /listen\.headersTimeoutMs \(200 ms\)/);
    } finally {
      clearInterval(trickle);
    }
  });

  test('a connection that never sends a byte is answered 408 and closed', async () => {
    const socket = await openSocket(service);
    assertEnvelope(parseReply(await readUntilClosed(socket)), 408, 'request_timeout');
  });
});
