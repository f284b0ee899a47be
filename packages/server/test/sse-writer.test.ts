/**
 * The SSE writer against a fake response (backpressure waits and pings, without a socket), and
 * against a real socket (a held opening goes out in one write with what follows it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { Agent, createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamEvent } from '@model-messages/protocol';
import { ConnectionClosing } from '../src/http/connection-closing.js';
import { SseWriter } from '../src/http/sse-writer.js';

/** A response whose every write reports a full buffer, then drains on the next turn unless held. */
class BackpressuredResponse extends EventEmitter {
  destroyed = false;
  writes: string[] = [];
  holdDrain = false;
  /** node:http's verdict on the request's keep-alive; a client's `connection: close` makes it false. */
  shouldKeepAlive = true;
  headers: Record<string, string> = {};
  /** Headers as node:http takes them: an object, or a flat list of names and values (SseWriter's). */
  writeHead(_status: number, headers: Record<string, string> | string[]): this {
    if (!Array.isArray(headers)) this.headers = headers;
    else for (let index = 0; index < headers.length; index += 2) this.headers[headers[index]!] = headers[index + 1]!;
    return this;
  }
  write(chunk: string): boolean {
    this.writes.push(chunk);
    if (!this.holdDrain) setImmediate(() => this.emit('drain'));
    return false;
  }
  end(): this {
    return this;
  }
}

const DELTA = {
  type: 'content_block_delta',
  index: 0,
  delta: { type: 'text_delta', text: 'x' },
} as unknown as StreamEvent;

test('fifty backpressured writes leave no listeners behind and raise no MaxListenersExceededWarning', async () => {
  const response = new BackpressuredResponse();
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  process.on('warning', onWarning);
  const before = {
    drain: response.listenerCount('drain'),
    close: response.listenerCount('close'),
    error: response.listenerCount('error'),
  };
  const writer = new SseWriter(response as unknown as ServerResponse, 10_000);
  writer.open({ 'request-id': 'req_test' });
  for (let index = 0; index < 50; index += 1) await writer.write([DELTA]);
  writer.end();
  await new Promise((resolve) => setImmediate(resolve));
  process.off('warning', onWarning);
  assert.equal(response.writes.length, 50);
  assert.deepEqual(
    {
      drain: response.listenerCount('drain'),
      close: response.listenerCount('close'),
      error: response.listenerCount('error'),
    },
    before,
  );
  assert.deepEqual(
    warnings.map((warning) => warning.name),
    [],
  );
});

/** A writer whose first write waits for a drain the response holds back. */
function writeHeldAtDrain(pingIntervalMs: number): {
  response: BackpressuredResponse;
  writer: SseWriter;
  written: Promise<void>;
} {
  const response = new BackpressuredResponse();
  response.holdDrain = true;
  const writer = new SseWriter(response as unknown as ServerResponse, pingIntervalMs);
  writer.open({ 'request-id': 'req_test' });
  return { response, writer, written: writer.write([DELTA]) };
}

test('a write waiting for drain ends when the peer goes away, and leaves no listeners', async () => {
  const { response, writer, written } = writeHeldAtDrain(10_000);
  response.destroyed = true;
  response.emit('close');
  await written;
  writer.end();
  assert.equal(response.listenerCount('drain'), 0);
  assert.equal(response.listenerCount('close'), 0);
});

test('no ping is written while a write waits for drain; pings resume after it', async () => {
  const { response, writer, written } = writeHeldAtDrain(100);
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(response.writes.length, 1, 'only the held write, no pings behind it');
  response.holdDrain = false;
  response.emit('drain');
  await written;
  await new Promise((resolve) => setTimeout(resolve, 400));
  writer.end();
  assert.ok(
    response.writes.slice(1).some((chunk) => chunk.startsWith('event: ping')),
    'pings once drained',
  );
});

test('the stream says Connection: keep-alive itself (no Keep-Alive timeout hint), and Connection: close once the app is closing', () => {
  const closing = new ConnectionClosing();
  const before = new BackpressuredResponse();
  new SseWriter(before as unknown as ServerResponse, 10_000, closing).open({ 'request-id': 'req_test' });
  closing.start();
  const after = new BackpressuredResponse();
  const writer = new SseWriter(after as unknown as ServerResponse, 10_000, closing);
  writer.open({ 'request-id': 'req_test' });
  writer.end();
  assert.equal(before.headers.connection, 'keep-alive');
  assert.equal(after.headers.connection, 'close');
  const askedToClose = new BackpressuredResponse();
  askedToClose.shouldKeepAlive = false;
  new SseWriter(askedToClose as unknown as ServerResponse, 10_000, new ConnectionClosing()).open({});
  assert.equal(askedToClose.headers.connection, 'close');
});

const START = { type: 'message_start', message: { id: 'msg_test' } } as unknown as StreamEvent;

/**
 * A real server whose one reply `serve` writes with an SseWriter, and a client that records each
 * chunk as it arrives with what the server had written by then (`served`: its steps so far).
 */
async function chunksOfOneReply(
  serve: (writer: SseWriter, step: (name: string) => void) => Promise<void>,
): Promise<{ chunk: string; served: string[] }[]> {
  const served: string[] = [];
  const agent = new Agent({ keepAlive: true });
  const server = createServer((_request, response) => {
    const writer = new SseWriter(response, 60_000);
    writer.open({ 'request-id': 'req_test' });
    void serve(writer, (name) => served.push(name));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    // Kept alive, so that the server's socket is not ended after the reply: ending a socket
    // uncorks it whatever was held.
    const outgoing = request({ port: (server.address() as AddressInfo).port, method: 'POST', agent });
    outgoing.end();
    const [response] = (await once(outgoing, 'response')) as [NodeJS.ReadableStream];
    const chunks: { chunk: string; served: string[] }[] = [];
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => chunks.push({ chunk, served: [...served] }));
    await once(response, 'end');
    return chunks;
  } finally {
    agent.destroy();
    server.close();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test('a held opening goes out in one write with the output that comes within the hold', async () => {
  const chunks = await chunksOfOneReply(async (writer, step) => {
    await writer.write([START], 60_000);
    await sleep(20);
    step('delta written');
    await writer.write([DELTA]);
    writer.end();
  });
  assert.match(chunks[0]!.chunk, /event: message_start[\s\S]*event: content_block_delta/);
  assert.deepEqual(chunks[0]!.served, ['delta written'], 'nothing reached the client before the delta was written');
});

test('a held opening goes out by itself when the hold ends first', async () => {
  const chunks = await chunksOfOneReply(async (writer, step) => {
    await writer.write([START], 10);
    await sleep(300);
    step('delta written');
    await writer.write([DELTA]);
    writer.end();
  });
  assert.match(chunks[0]!.chunk, /event: message_start/);
  assert.doesNotMatch(chunks[0]!.chunk, /content_block_delta/);
  assert.deepEqual(chunks[0]!.served, [], 'the opening arrived before the delta was written');
});

test('ending the stream lets a held opening out with the end', { timeout: 20_000 }, async () => {
  // Held for a minute: the reply can only end in time if end() lets the opening go.
  const chunks = await chunksOfOneReply(async (writer) => {
    await writer.write([START], 60_000);
    writer.end();
  });
  assert.match(chunks.map((entry) => entry.chunk).join(''), /event: message_start/);
});
