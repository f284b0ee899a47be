/**
 * The budget of request-body bytes in flight (issue 31, http/body-bytes-budget.ts) and its
 * default from the machine's memory (http/machine-memory.ts), without HTTP. Through the service:
 * test/body-budget.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_REQUEST_BYTES, ServiceError } from '@model-messages/protocol';
import { errorReply } from '../src/http/error-reply.js';
import { BodyBytesBudget } from '../src/http/body-bytes-budget.js';
import { defaultMaxBodyBytesInFlight } from '../src/http/machine-memory.js';

const MEGABYTE = 1024 * 1024;
const GIGABYTE = 1024 * MEGABYTE;

describe('body bytes budget', () => {
  test('holds take bytes while they fit and are refused past the limit, each refusal counted', () => {
    const budget = new BodyBytesBudget(100);
    const first = budget.hold();
    const second = budget.hold();
    assert.equal(first.take(60), true);
    assert.equal(second.take(40), true);
    assert.equal(second.take(1), false);
    assert.equal(budget.hold().take(1), false);
    assert.deepEqual(
      { inFlight: budget.bytesInFlight, refusals: budget.refusals, first: first.held, second: second.held },
      { inFlight: 100, refusals: 2, first: 60, second: 40 },
    );
  });

  test('a hold takes chunk after chunk and gives all of them back when released, once', () => {
    const budget = new BodyBytesBudget(100);
    const chunked = budget.hold();
    for (const chunk of [10, 20, 30]) assert.equal(chunked.take(chunk), true);
    assert.equal(budget.bytesInFlight, 60);
    chunked.release();
    chunked.release();
    assert.deepEqual({ inFlight: budget.bytesInFlight, held: chunked.held }, { inFlight: 0, held: 0 });
    assert.equal(budget.hold().take(100), true);
  });

  test('a refused take holds nothing, so the bytes left still admit a body that fits', () => {
    const budget = new BodyBytesBudget(100);
    const large = budget.hold();
    assert.equal(large.take(70), true);
    const refused = budget.hold();
    assert.equal(refused.take(40), false);
    assert.equal(refused.held, 0);
    assert.equal(budget.hold().take(30), true);
    assert.equal(budget.bytesInFlight, 100);
  });

  test('the refusal is a 529 overloaded_error naming the setting, with retry-after, that closes the connection', () => {
    const budget = new BodyBytesBudget(40 * MEGABYTE);
    const refusal = budget.hold().refusal();
    assert.ok(refusal instanceof ServiceError);
    const reply = errorReply(refusal, 'req_test');
    assert.equal(reply.status, 529);
    assert.equal(reply.body.error.type, 'overloaded_error');
    assert.match(reply.body.error.message, /\(40 MB, listen\.maxBodyBytesInFlight\)/);
    assert.deepEqual(reply.headers, { connection: 'close', 'mms-error-code': 'overloaded', 'retry-after': '1' });
  });
});

describe('the default budget', () => {
  test('is a sixteenth of the memory between four of the largest bodies and 1 GB', () => {
    assert.deepEqual(
      [512 * MEGABYTE, 2 * GIGABYTE, 4 * GIGABYTE, 16 * GIGABYTE, 256 * GIGABYTE].map((memory) =>
        defaultMaxBodyBytesInFlight(memory),
      ),
      [4 * MAX_REQUEST_BYTES, 128 * MEGABYTE, 256 * MEGABYTE, GIGABYTE, GIGABYTE],
    );
  });

  test('always admits the largest body', () => {
    assert.ok(defaultMaxBodyBytesInFlight() >= MAX_REQUEST_BYTES);
    assert.ok(defaultMaxBodyBytesInFlight(0) >= MAX_REQUEST_BYTES);
  });
});
