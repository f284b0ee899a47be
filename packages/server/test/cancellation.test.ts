/** A request's cancellation, its listeners and the AbortSignal it makes on demand (backends/cancellation.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cancellation } from '../src/backends/cancellation.js';

test('before any abort: not aborted, throwIfAborted passes, a signal made now is live', () => {
  const cancellation = new Cancellation();
  assert.equal(cancellation.aborted, false);
  cancellation.throwIfAborted();
  assert.equal(cancellation.signal.aborted, false);
});

test('abort with a reason: throwIfAborted throws it, and a signal made afterwards is aborted with it', () => {
  const cancellation = new Cancellation();
  const reason = new Error('client disconnected');
  cancellation.abort(reason);
  assert.equal(cancellation.aborted, true);
  assert.throws(
    () => cancellation.throwIfAborted(),
    (error) => error === reason,
  );
  assert.equal(cancellation.signal.aborted, true);
  assert.equal(cancellation.signal.reason, reason);
});

test('a signal made before the abort fires its abort event, with the reason', () => {
  const cancellation = new Cancellation();
  const signal = cancellation.signal;
  const heard: unknown[] = [];
  signal.addEventListener('abort', () => heard.push(signal.reason));
  const reason = new Error('gone');
  cancellation.abort(reason);
  assert.deepEqual(heard, [reason]);
  assert.equal(cancellation.signal, signal, 'one signal per cancellation');
});

test('the first abort wins; without a reason it is an AbortError, as AbortController gives', () => {
  const cancellation = new Cancellation();
  cancellation.abort();
  cancellation.abort(new Error('later'));
  let thrown: unknown;
  try {
    cancellation.throwIfAborted();
  } catch (error) {
    thrown = error;
  }
  assert.ok(thrown instanceof DOMException);
  assert.equal(thrown.name, 'AbortError');
  assert.equal(cancellation.signal.reason, thrown);
});

test('onAbort: a listener hears the reason once, one that stopped listening does not, and a late one hears it at once', () => {
  const cancellation = new Cancellation();
  const heard: string[] = [];
  cancellation.onAbort((reason) => heard.push(`kept: ${(reason as Error).message}`));
  const stop = cancellation.onAbort(() => heard.push('stopped'));
  stop();
  stop(); // stopping twice changes nothing
  assert.equal(cancellation.reason, undefined);
  const reason = new Error('gone');
  cancellation.abort(reason);
  cancellation.abort(new Error('later'));
  assert.deepEqual(heard, ['kept: gone']);
  assert.equal(cancellation.reason, reason);
  const late = cancellation.onAbort((lateReason) => heard.push(`late: ${(lateReason as Error).message}`));
  assert.deepEqual(heard, ['kept: gone', 'late: gone']);
  late();
});
