/**
 * Clients that stop reading (issue 16, case 4): a reply whose writes make no progress for
 * listen.writeTimeoutMs is cut off, its connection closed and its admission slot given back.
 * Before, one paused streaming reader held its slot for as long as it stayed, and every other
 * request on the model was a 529.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { postJson, startService, type RunningService } from '@model-messages/testing';
import { openSocket, readUntilClosed, requestHead } from './raw-http-support.js';

/**
 * 8 MB of 64-letter words, the longest the scripted tokenizer makes one token of: the backend
 * echoes it, so the reply is far larger than the socket buffers of a loopback connection whose
 * reader has stopped (on Linux those take about 4 MB of it before the writes stall).
 */
const LONG_TEXT = `${'x'.repeat(63)} `.repeat(128 * 1024);
const LONG_TEXT_TOKENS = 2 * 128 * 1024;
/**
 * Half of it for a streamed reply: about 180 bytes of event for each 64-letter token, so its
 * 12 MB of events are as far past the socket buffers as the JSON reply of all 8 MB is.
 */
const STREAMED_TEXT = LONG_TEXT.slice(0, LONG_TEXT.length / 2);

let service: RunningService;
const logLines: Array<Record<string, unknown>> = [];
before(async () => {
  service = await startService(
    {
      listen: { writeTimeoutMs: 300 },
      models: [
        {
          id: 'single',
          tier: 'mid',
          generation: 'newer',
          contextWindow: 2 * LONG_TEXT_TOKENS,
          maxOutputTokens: LONG_TEXT_TOKENS,
          backend: { type: 'scripted', concurrency: 1, queue: 0 },
        },
      ],
    },
    undefined,
    { log: { level: 'info', destination: { write: (text: string) => void logLines.push(JSON.parse(text)) } } },
  );
});

/** The log's cut-off line names the request that was cut, as its reply's request-id header does. */
function assertCutOffLogged(head: string): void {
  const requestId = /request-id: (\S+)/i.exec(head)?.[1];
  assert.ok(requestId, head);
  const cut = logLines.filter((line) => String(line.msg).startsWith('reply cut off'));
  assert.ok(
    cut.some((line) => line.reqId === requestId),
    `no cut-off line for ${requestId}: ${JSON.stringify(cut)}`,
  );
}
after(() => service.close());

/** Sends a message request on a raw socket and never reads the reply. */
async function pausedReader(stream: boolean): Promise<Socket> {
  const body = JSON.stringify({
    model: 'single',
    max_tokens: LONG_TEXT_TOKENS,
    stream,
    messages: [{ role: 'user', content: stream ? STREAMED_TEXT : LONG_TEXT }],
  });
  const socket = await openSocket(service);
  socket.pause();
  socket.write(
    `${requestHead(service, 'POST', '/v1/messages', ['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`])}\r\n\r\n${body}`,
  );
  return socket;
}

const hello = { model: 'single', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] };

/** Asks again every 50 ms until `status` comes back (the test's timeout bounds it). */
async function untilStatus(status: number): Promise<void> {
  while ((await postJson(service, '/v1/messages', hello)).status !== status)
    await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('a client that stops reading', { timeout: 60_000 }, () => {
  test('a paused streaming reader is cut off after writeTimeoutMs, and its slot serves the next request', async () => {
    const reader = await pausedReader(true);
    // The reader holds the model's one slot: another request finds it taken (queue 0)...
    await untilStatus(529);
    // ...until its write deadline gives the slot back.
    await untilStatus(200);
    const received = await readUntilClosed(reader);
    assert.match(received, /^HTTP\/1\.1 200 /);
    assert.ok(!received.includes('event: message_stop'), 'the stream was cut, never finished');
    assertCutOffLogged(received.slice(0, received.indexOf('\r\n\r\n')));
  });

  test('a JSON reply its client stops reading is cut off too, and its connection closed', async () => {
    const reader = await pausedReader(false);
    // Read until the reply has begun, then stop.
    reader.resume();
    let received = Buffer.alloc(0);
    await new Promise<void>((resolve) =>
      reader.on('data', function begun(chunk: Buffer) {
        received = Buffer.concat([received, chunk]);
        if (!received.includes('\r\n\r\n')) return;
        reader.off('data', begun);
        reader.pause();
        resolve();
      }),
    );
    // Far past the deadline, then reading again: the rest of the reply never comes.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const rest = await readUntilClosed(reader);
    const head = received.subarray(0, received.indexOf('\r\n\r\n')).toString();
    const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
    assert.ok(length > LONG_TEXT.length, head);
    assert.ok(received.length + Buffer.byteLength(rest) < head.length + 4 + length, 'the reply was cut short');
    assertCutOffLogged(head);
  });
});
