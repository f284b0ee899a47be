/** MessageEvents: a turn's parts as wire events, and the admission slot given back however the turn ends. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageEvents } from '../src/routes/messages/message-events.js';
import { MessageEncoder } from '../src/streaming/message-encoder.js';
import type { StreamPart } from '../src/streaming/stream-part.js';

const TEXT_BLOCK: StreamPart[] = [
  { type: 'block-start', block: { type: 'text', text: '', citations: null } },
  { type: 'block-delta', delta: { type: 'text_delta', text: 'hello' } },
  { type: 'block-stop' },
];
const FINISH: StreamPart[] = [
  { type: 'output-tokens', count: 1 },
  { type: 'finish', stopReason: 'end_turn', stopSequence: null },
];

/**
 * A turn that gives `batches`, then fails with `failure` if given; it logs what happened to it.
 * `slot` is the admission's answer: by default a slot held at once.
 */
function turn(batches: StreamPart[][], failure?: Error, slot?: (release: () => void) => Promise<() => void>) {
  const log: string[] = [];
  async function* parts(): AsyncGenerator<StreamPart[]> {
    log.push('turn started');
    try {
      for (const batch of batches) yield batch;
      if (failure) throw failure;
    } finally {
      log.push('turn closed');
    }
  }
  const release = () => void log.push('released');
  const events = new MessageEvents(
    parts(),
    new MessageEncoder({ id: 'msg_test', model: 'test', inputTokens: 3 }),
    slot ? slot(release) : release,
  );
  return { events, log };
}

/** A slot the test grants or refuses when it chooses, as the admission queue does. */
function queuedSlot() {
  let grant: (release: () => void) => void = () => undefined;
  let refuse: (reason: Error) => void = () => undefined;
  let release: () => void = () => undefined;
  const slot = (given: () => void) => {
    release = given;
    return new Promise<() => void>((resolve, reject) => {
      grant = resolve;
      refuse = reject;
    });
  };
  return { slot, grant: () => grant(release), refuse: (reason: Error) => refuse(reason) };
}

test('the first batch starts with message_start; the turn ends with message_stop, and the slot is given back once', async () => {
  const { events, log } = turn([TEXT_BLOCK, FINISH]);
  const first = await events.next();
  assert.deepEqual(
    first.value?.map((event) => event.type),
    ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop'],
  );
  const second = await events.next();
  assert.deepEqual(
    second.value?.map((event) => event.type),
    ['message_delta', 'message_stop'],
  );
  assert.deepEqual(log, ['turn started']);
  assert.equal((await events.next()).done, true);
  assert.deepEqual(log, ['turn started', 'turn closed', 'released']);
  assert.equal((await events.next()).done, true);
  await events.return();
  assert.deepEqual(log, ['turn started', 'turn closed', 'released']);
});

test('a turn that fails gives the slot back and its failure reaches the reader', async () => {
  const { events, log } = turn([TEXT_BLOCK], new Error('engine gone'));
  await events.next();
  await assert.rejects(events.next(), /engine gone/);
  assert.deepEqual(log, ['turn started', 'turn closed', 'released']);
  assert.equal((await events.next()).done, true);
});

test('a reader that leaves early stops the turn, then gives the slot back', async () => {
  const { events, log } = turn([TEXT_BLOCK, FINISH]);
  await events.next();
  await events.return();
  assert.deepEqual(log, ['turn started', 'turn closed', 'released']);
  assert.equal((await events.next()).done, true);
});

test('a reader that leaves before the first batch still gives the slot back', async () => {
  const { events, log } = turn([TEXT_BLOCK, FINISH]);
  await events.return();
  assert.deepEqual(log, ['released']);
});

test('parts out of order stop the turn, give the slot back, and reach the reader as the error', async () => {
  const { events, log } = turn([[{ type: 'block-stop' }], FINISH]);
  await assert.rejects(events.next(), /block-stop with no open block/);
  assert.deepEqual(log, ['turn started', 'turn closed', 'released']);
});

test('start() gives message_start alone at once; the turn runs only once the queue grants the slot', async () => {
  const queue = queuedSlot();
  const { events, log } = turn([TEXT_BLOCK, FINISH], undefined, queue.slot);
  assert.deepEqual(
    events.start().map((event) => event.type),
    ['message_start'],
  );
  const first = events.next();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(log, [], 'no turn before the slot');
  queue.grant();
  assert.deepEqual(
    (await first).value?.map((event) => event.type),
    ['content_block_start', 'content_block_delta', 'content_block_stop'],
  );
  await events.next();
  assert.equal((await events.next()).done, true);
  assert.deepEqual(log, ['turn started', 'turn closed', 'released']);
});

test('a request that leaves the queue fails with its reason, runs no turn and has no slot to give back', async () => {
  const queue = queuedSlot();
  const { events, log } = turn([TEXT_BLOCK, FINISH], undefined, queue.slot);
  events.start();
  // Refused before anyone reads: the rejection must not go unhandled meanwhile.
  queue.refuse(new Error('client disconnected'));
  await new Promise((resolve) => setImmediate(resolve));
  await assert.rejects(events.next(), /client disconnected/);
  await events.return();
  assert.deepEqual(log, []);
});

test('a reader that leaves while queued gives back a slot granted afterwards', async () => {
  const queue = queuedSlot();
  const { events, log } = turn([TEXT_BLOCK, FINISH], undefined, queue.slot);
  events.start();
  await events.return();
  assert.deepEqual(log, []);
  queue.grant();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(log, ['released']);
});
