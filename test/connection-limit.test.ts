/**
 * listen.maxConnections (issue 16, case 5): connections that have not completed a request give
 * way to new ones at the limit, so idle or trickling sockets cannot lock real clients out; when
 * every connection has a request in flight, a new one's request is answered 503 in the envelope.
 */
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { postJson, startService, type RunningService } from '@model-messages/testing';
import { assertEnvelope, openSocket, parseReply, readUntilClosed, requestHead } from './raw-http-support.js';

const hello = { model: 'mid', max_tokens: 5, messages: [{ role: 'user', content: 'hello' }] };

let service: RunningService | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await service?.close();
});

/**
 * A request whose body never comes: it stays in flight on its connection. It asks for
 * 100-continue, which the service sends once it has read the head: from then on the request is
 * in flight.
 */
async function requestInFlight(target: RunningService): Promise<Socket> {
  const socket = await openSocket(target);
  sockets.push(socket);
  socket.write(
    `${requestHead(target, 'POST', '/v1/messages', ['content-type: application/json', 'content-length: 1000', 'expect: 100-continue'])}\r\n\r\n`,
  );
  const [interim] = (await once(socket, 'data')) as [Buffer];
  assert.match(interim.toString(), /^HTTP\/1\.1 100 Continue/);
  socket.write('{"model":');
  return socket;
}

describe('at listen.maxConnections', () => {
  test('sockets that never send a request give way to a real client, oldest first', async () => {
    service = await startService({ listen: { maxConnections: 3 } });
    const idle: Socket[] = [];
    for (let index = 0; index < 3; index += 1) idle.push(await openSocket(service));
    sockets.push(...idle);
    const oldestClosed = once(idle[0]!, 'close');
    const response = await postJson(service, '/v1/messages', hello, { connection: 'close' });
    assert.equal(response.status, 200);
    await oldestClosed;
    assert.deepEqual(
      idle.map((socket) => socket.destroyed),
      [true, false, false],
    );
  });

  test('when every connection has a request in flight, a new request is a 503 in the envelope, and its connection closes', async () => {
    service = await startService({ listen: { maxConnections: 2 } });
    const busy = [await requestInFlight(service), await requestInFlight(service)];
    const socket = await openSocket(service);
    sockets.push(socket);
    const reading = readUntilClosed(socket);
    socket.write(`${requestHead(service, 'GET', '/v1/models')}\r\n\r\n`);
    const reply = parseReply(await reading);
    assert.deepEqual(
      busy.map((connection) => connection.destroyed),
      [false, false],
    );
    const envelope = assertEnvelope(reply, 503, 'too_many_connections');
    assert.equal(envelope.error.type, 'overloaded_error');
    assert.match(envelope.error.message, /listen\.maxConnections/);
    assert.equal(reply.headers['retry-after'], '1');
    assert.equal(reply.headers.connection, 'close');
  });
});
