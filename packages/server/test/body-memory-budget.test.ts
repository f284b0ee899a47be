/**
 * The budget of memory request bodies hold (issue 31, http/body-memory-budget.ts) and its
 * default from the machine's memory (http/machine-memory.ts), without HTTP. Through the service:
 * test/body-budget.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_REQUEST_BYTES, ServiceError } from '@model-messages/protocol';
import { errorReply } from '../src/http/error-reply.js';
import { BodyMemoryBudget, MEMORY_PER_BODY_BYTE } from '../src/http/body-memory-budget.js';
import { defaultMaxBodyMemoryInFlight } from '../src/http/machine-memory.js';

const MEGABYTE = 1024 * 1024;
const GIGABYTE = 1024 * MEGABYTE;

describe('body memory budget', () => {
  test("holds take twice a body's bytes while they fit and are refused past the limit, each refusal counted", () => {
    assert.equal(MEMORY_PER_BODY_BYTE, 2);
    const budget = new BodyMemoryBudget(200);
    const first = budget.hold();
    const second = budget.hold();
    assert.equal(first.take(60), true);
    assert.equal(second.take(40), true);
    assert.equal(second.take(1), false);
    assert.equal(budget.hold().take(1), false);
    assert.deepEqual(
      { inFlight: budget.heldBytes, refusals: budget.refusals, first: first.held, second: second.held },
      { inFlight: 200, refusals: 2, first: 120, second: 80 },
    );
  });

  test('a hold takes chunk after chunk and gives all of them back when released, once', () => {
    const budget = new BodyMemoryBudget(200);
    const chunked = budget.hold();
    for (const chunk of [10, 20, 30]) assert.equal(chunked.take(chunk), true);
    assert.equal(budget.heldBytes, 120);
    chunked.release();
    chunked.release();
    assert.deepEqual({ inFlight: budget.heldBytes, held: chunked.held }, { inFlight: 0, held: 0 });
    assert.equal(budget.hold().take(100), true);
  });

  test('a refused take holds nothing, so the bytes left still admit a body that fits', () => {
    const budget = new BodyMemoryBudget(200);
    const large = budget.hold();
    assert.equal(large.take(70), true);
    const refused = budget.hold();
    assert.equal(refused.take(40), false);
    assert.equal(refused.held, 0);
    assert.equal(budget.hold().take(30), true);
    assert.equal(budget.heldBytes, 200);
  });

  test('the refusal is a 529 overloaded_error naming the setting, with retry-after, that closes the connection', () => {
    const budget = new BodyMemoryBudget(40 * MEGABYTE);
    const refusal = budget.hold().refusal();
    assert.ok(refusal instanceof ServiceError);
    const reply = errorReply(refusal, 'req_test');
    assert.equal(reply.status, 529);
    assert.equal(reply.body.error.type, 'overloaded_error');
    assert.match(reply.body.error.message, /\(40 MB of memory, listen\.maxBodyMemoryInFlight\)/);
    assert.deepEqual(reply.headers, { connection: 'close', 'mms-error-code': 'overloaded', 'retry-after': '1' });
  });
});

describe('the default budget', () => {
  test('is a sixteenth of the memory between what four of the largest bodies take and 1 GB', () => {
    assert.deepEqual(
      [512 * MEGABYTE, 2 * GIGABYTE, 8 * GIGABYTE, 16 * GIGABYTE, 256 * GIGABYTE].map((memory) =>
        defaultMaxBodyMemoryInFlight(memory),
      ),
      [8 * MAX_REQUEST_BYTES, 256 * MEGABYTE, 512 * MEGABYTE, GIGABYTE, GIGABYTE],
    );
  });

  test('always admits the largest body', () => {
    assert.ok(defaultMaxBodyMemoryInFlight() >= MAX_REQUEST_BYTES * MEMORY_PER_BODY_BYTE);
    assert.ok(defaultMaxBodyMemoryInFlight(0) >= MAX_REQUEST_BYTES * MEMORY_PER_BODY_BYTE);
  });
});
