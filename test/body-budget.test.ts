/**
 * listen.maxBodyMemoryInFlight (issue 31): the memory request bodies hold at once, twice a body's
 * length (MEMORY_PER_BODY_BYTE). A body
 * whose declared length does not fit in what is left is answered 529 before any of it is sent,
 * a chunked body once it would pass the budget, and the connection closes; bodies that fit are
 * served, and each request gives its bytes back when it ends, whether its client stayed or not.
 * The budget's own accounting: packages/server/test/body-memory-budget.test.ts.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { postJson, startService, type RunningService } from '@model-messages/testing';
import { MEMORY_PER_BODY_BYTE } from '../packages/server/src/http/body-memory-budget.js';
import {
  assertEnvelope,
  openSocket,
  parseReply,
  readUntilClosed,
  requestHead,
  type RawReply,
} from './raw-http-support.js';

const MEGABYTE = 1024 * 1024;
/** Room for 40 MB of body. */
const BUDGET = 80 * MEGABYTE;
/** More than half the budget: two such bodies never fit together. */
const LARGE_BODY = 21 * MEGABYTE;
const JSON_HEADERS = ['content-type: application/json'];
const hello = { model: 'mid', max_tokens: 5, messages: [{ role: 'user', content: 'hello' }] };

let service: RunningService;
const sockets: Socket[] = [];
before(async () => {
  service = await startService({ listen: { maxBodyMemoryInFlight: BUDGET } });
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  // Every test starts with the whole budget: what a closed socket held is given back.
  await bodyBytesInFlightReach(0);
});
after(() => service.close());

/** The service's metric, as GET /metrics reads it. */
async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${service.baseURL}/metrics`, { headers: service.headers })).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  assert.ok(line, `no ${name} in /metrics`);
  return Number(line.slice(name.length + 1));
}

/** Waits until the bodies in flight hold the memory of `bytes` body bytes (the test's own time limit bounds it). */
async function bodyBytesInFlightReach(bytes: number): Promise<void> {
  while ((await metric('mms_request_body_memory_bytes')) !== bytes * MEMORY_PER_BODY_BYTE)
    await new Promise((resume) => setTimeout(resume, 10));
}

/**
 * A message request whose head, sent alone on a connection of its own, frames its body with
 * `framing` (`content-length: N`, `transfer-encoding: chunked`): its socket, and all the service
 * sends on it until the connection closes.
 */
async function sendHead(framing: string): Promise<{ socket: Socket; received: Promise<string> }> {
  const socket = await openSocket(service);
  sockets.push(socket);
  const received = readUntilClosed(socket);
  socket.write(`${requestHead(service, 'POST', '/v1/messages', [...JSON_HEADERS, framing])}\r\n\r\n`);
  return { socket, received };
}

/** A request in flight that declares `length` bytes of body and sends only its first few. */
async function bodyInFlight(length: number): Promise<Socket> {
  const { socket } = await sendHead(`content-length: ${length}`);
  socket.write('{"model":');
  await bodyBytesInFlightReach(length);
  return socket;
}

/** The budget's refusal: a 529 in the envelope that names the setting, with retry-after, and the connection closed. */
function assertBudgetRefusal(reply: RawReply): void {
  const envelope = assertEnvelope(reply, 529, 'overloaded');
  assert.equal(envelope.error.type, 'overloaded_error');
  assert.match(envelope.error.message, /\(80 MB of memory, listen\.maxBodyMemoryInFlight\)/);
  assert.equal(reply.headers['retry-after'], '1');
  assert.equal(reply.headers.connection, 'close');
}

/** A valid request `bytes` long whose prompt is far past the model's window: read whole, then refused by the model. */
function largeRequest(bytes: number): string {
  const head = '{"model":"mid","max_tokens":5,"messages":[{"role":"user","content":"';
  const tail = '"}]}';
  return `${head}${'lorem ipsum '.repeat(bytes / 12).slice(0, bytes - head.length - tail.length)}${tail}`;
}

/** The chunked encoding of one chunk. */
function chunk(data: string): string {
  return `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
}

describe('the budget of request-body bytes in flight', () => {
  test('a declared body over what is left gets a 529 with retry-after before any of it is sent, and its connection closes', async () => {
    await bodyInFlight(30 * MEGABYTE);
    // The head alone: the reply and the close come back without a byte of the body.
    const { received } = await sendHead(`content-length: ${20 * MEGABYTE}`);
    assertBudgetRefusal(parseReply(await received));
    assert.equal(await metric('mms_body_budget_refusals_total'), 1);
    assert.equal(await metric('mms_request_body_memory_bytes'), 30 * MEGABYTE * MEMORY_PER_BODY_BYTE);
  });

  test('a body that fits in what is left is served while others hold the rest', async () => {
    await bodyInFlight(30 * MEGABYTE);
    const response = await postJson(service, '/v1/messages', hello);
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(((await response.json()) as { content: Array<{ text: string }> }).content[0]?.text, 'hello');
  });

  test('each request gives its bytes back when it ends: large bodies one after another are all read', async () => {
    for (let round = 0; round < 3; round += 1) {
      const response = await postJson(service, '/v1/messages', largeRequest(LARGE_BODY));
      // Read whole and parsed: the model refuses the prompt, not the budget the body.
      assert.equal(response.status, 400, `round ${round}`);
      assert.equal(response.headers.get('mms-error-code'), 'prompt_too_long');
      assert.equal(await metric('mms_request_body_memory_bytes'), 0);
    }
  });

  test('a chunked body is refused 529 once it would pass the budget, and its connection closes', async () => {
    await bodyInFlight(30 * MEGABYTE);
    const { socket, received } = await sendHead('transfer-encoding: chunked');
    // 4 MB at a time, past the 10 MB left by the third; the service closes before the last.
    const piece = 'x'.repeat(4 * MEGABYTE);
    socket.write(chunk(`{"model":"mid","max_tokens":5,"messages":[{"role":"user","content":"${piece}`));
    for (let sent = 1; sent < 5 && !socket.destroyed; sent += 1) socket.write(chunk(piece));
    assertBudgetRefusal(parseReply(await received));
  });

  test('a client that goes away mid-body gives its bytes back', async () => {
    const socket = await bodyInFlight(30 * MEGABYTE);
    socket.destroy();
    await bodyBytesInFlightReach(0);
    const response = await postJson(service, '/v1/messages', largeRequest(LARGE_BODY));
    assert.equal(response.headers.get('mms-error-code'), 'prompt_too_long');
  });
});
