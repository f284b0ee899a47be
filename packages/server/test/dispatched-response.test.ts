/**
 * The undici dispatch handler the engine client reads its responses with (dispatched-response.ts),
 * driven as undici drives it, with a controller that records what it was asked: pieces in order,
 * the engine paused while too much is unread and resumed as the reader catches up, the failure
 * after the data before it, aborts before and after the response, and the rest of a complete
 * answer dropped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Dispatcher } from 'undici';
import { DispatchedResponse } from '../src/backends/dispatched-response.js';

class RecordingController implements Dispatcher.DispatchController {
  paused = false;
  aborted = false;
  reason: Error | null = null;
  pauses = 0;
  resumes = 0;

  constructor(private readonly response?: DispatchedResponse) {}

  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    // As undici does: the handler hears of it as the request's error.
    this.response?.onResponseError(this, reason);
  }

  pause(): void {
    this.paused = true;
    this.pauses += 1;
  }

  resume(): void {
    this.paused = false;
    this.resumes += 1;
  }
}

function started(): { response: DispatchedResponse; controller: RecordingController } {
  const response = new DispatchedResponse();
  const controller = new RecordingController(response);
  response.onRequestStart(controller);
  response.onResponseStart(controller, 200, { 'content-type': 'text/event-stream' });
  return { response, controller };
}

test('pieces come out in order, text split inside a character is joined, and the end is undefined', async () => {
  const { response, controller } = started();
  await response.started;
  assert.equal(response.statusCode, 200);
  const bytes = Buffer.from('data: é\n\n');
  response.onResponseData(controller, bytes.subarray(0, 7));
  response.onResponseData(controller, bytes.subarray(7));
  response.onResponseEnd();
  let text = '';
  for (let piece = await response.next(); piece !== undefined; piece = await response.next()) text += piece;
  assert.equal(text, 'data: é\n\n');
});

test('the text is what one TextDecoder makes of the whole body, however the body is cut', async () => {
  // ASCII pieces are decoded on their own and the rest through a decoder (issue 36): cut at every
  // pair of positions, with characters of 2, 3 and 4 bytes, byte order marks at the start and
  // inside, and bytes that are not UTF-8, the pieces must still join to the same text.
  const bodies = [
    Buffer.from('data: {"a":1}\n\n'),
    Buffer.from('data: é€😀\n\n'),
    Buffer.from('\uFEFFdata: x\n\n'),
    Buffer.from('data: \uFEFFx\n\n'),
    Buffer.concat([Buffer.from('\uFEFF'), Buffer.from('\uFEFFa\n')]),
    Buffer.from([0x64, 0xff, 0x0a, 0xe2, 0x82, 0x0a, 0xf0, 0x9f, 0x98, 0x80, 0x0a]),
  ];
  for (const body of bodies) {
    const whole = new TextDecoder().decode(body);
    for (let first = 0; first <= body.length; first += 1)
      for (let second = first; second <= body.length; second += 1) {
        const { response, controller } = started();
        for (const piece of [body.subarray(0, first), body.subarray(first, second), body.subarray(second)])
          response.onResponseData(controller, piece);
        response.onResponseEnd();
        assert.equal(
          await response.text(Number.POSITIVE_INFINITY),
          whole,
          `${body.toString('hex')} cut at ${first}, ${second}`,
        );
      }
  }
});

test('a reader that waits gets the piece that arrives later', async () => {
  const { response, controller } = started();
  const next = response.next();
  setImmediate(() => response.onResponseData(controller, Buffer.from('late')));
  assert.equal(await next, 'late');
});

test('an engine faster than its reader is paused at 16 unread pieces and resumed below 8', async () => {
  const { response, controller } = started();
  for (let index = 0; index < 16; index += 1) response.onResponseData(controller, Buffer.from(`${index};`));
  assert.equal(controller.pauses, 1);
  assert.ok(controller.paused);
  for (let index = 0; index < 8; index += 1) assert.equal(await response.next(), `${index};`);
  assert.ok(controller.paused, 'still 8 unread');
  assert.equal(await response.next(), '8;');
  assert.equal(controller.resumes, 1);
  assert.ok(!controller.paused);
});

test('a failure after data comes after that data', async () => {
  const { response, controller } = started();
  response.onResponseData(controller, Buffer.from('partial'));
  response.onResponseError(controller, new Error('socket hang up'));
  assert.equal(await response.next(), 'partial');
  await assert.rejects(response.next(), /socket hang up/);
});

test('a failure before the response rejects `started`', async () => {
  const response = new DispatchedResponse();
  const controller = new RecordingController(response);
  response.onRequestStart(controller);
  response.onResponseError(controller, new Error('connect ECONNREFUSED'));
  await assert.rejects(response.started, /ECONNREFUSED/);
});

test('an abort before the request starts is applied when it does, with its reason kept', async () => {
  const response = new DispatchedResponse();
  const reason = { why: 'the caller left' };
  response.abort(reason);
  const controller = new RecordingController(response);
  response.onRequestStart(controller);
  assert.ok(controller.aborted);
  assert.match(controller.reason!.message, /object Object/);
  assert.ok(response.aborted);
  assert.equal(response.reason, reason);
  await assert.rejects(response.started);
});

test('text() stops past its limit and ends the request; a response read to its end is not aborted', async () => {
  const { response, controller } = started();
  response.onResponseData(controller, Buffer.from('x'.repeat(10)));
  response.onResponseData(controller, Buffer.from('y'.repeat(10)));
  assert.equal(await response.text(15), 'x'.repeat(10) + 'y'.repeat(10));
  assert.ok(controller.aborted);

  const whole = started();
  whole.response.onResponseData(whole.controller, Buffer.from('{"ok":true}'));
  whole.response.onResponseEnd();
  assert.equal(await whole.response.text(Number.POSITIVE_INFINITY), '{"ok":true}');
  whole.response.leave();
  assert.ok(!whole.controller.aborted, 'nothing to end');
});

test('leave() ends a response read only in part (the cancel), but not one whose rest is discarded', () => {
  const partial = started();
  partial.response.onResponseData(partial.controller, Buffer.from('data: {}\n\n'));
  partial.response.leave();
  assert.ok(partial.controller.aborted);

  const complete = started();
  complete.response.onResponseData(complete.controller, Buffer.from('data: [DONE]\n\n'));
  complete.response.discardRest();
  complete.response.leave();
  assert.ok(!complete.controller.aborted, 'its connection goes back to the pool when it ends');
  complete.response.onResponseData(complete.controller, Buffer.from('\n'));
  complete.response.onResponseEnd();
  assert.ok(!complete.controller.aborted);
});

test('after discardRest, a paused engine is resumed, and more than 64 KB more ends the request', () => {
  const { response, controller } = started();
  for (let index = 0; index < 16; index += 1) response.onResponseData(controller, Buffer.from('z'));
  assert.ok(controller.paused);
  response.discardRest();
  assert.ok(!controller.paused);
  response.onResponseData(controller, Buffer.alloc(40 * 1024));
  assert.ok(!controller.aborted);
  response.onResponseData(controller, Buffer.alloc(40 * 1024));
  assert.ok(controller.aborted);
});
