/** A streamed reply honours the client's `connection: close`: the header says close, and the connection ends after it. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startService, type RunningService } from '@model-messages/testing';

let service: RunningService;
before(async () => {
  service = await startService();
});
after(async () => {
  await service.close();
});

test('a stream asked for with connection: close is answered with connection: close, and the service closes it', async () => {
  const { hostname, port } = new URL(service.baseURL);
  const body = JSON.stringify({
    model: 'mid',
    max_tokens: 20,
    stream: true,
    messages: [{ role: 'user', content: 'hi' }],
  });
  const head = [
    'POST /v1/messages HTTP/1.1',
    `host: ${hostname}:${port}`,
    ...Object.entries(service.headers).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
  ].join('\r\n');
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  // Resolves only when the service ends the connection: before the fix it stayed open for keep-alive.
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(`${head}\r\n\r\n${body}`);
  await closed;
  assert.match(received, /^HTTP\/1\.1 200/);
  assert.match(received, /\r\nconnection: close\r\n/i);
  assert.match(received, /event: message_stop/);
});
