/**
 * observability/live-feed.ts, the console's Live view (issue 37): the feed keeps a bounded number
 * of requests whatever passes; a follower that stops reading is dropped once it holds its share
 * of unsent bytes, while the others go on getting every request and the feed never waits; it
 * takes a bounded number of followers; the service's own reads and probes are left out.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INVALID_SPAN_CONTEXT, trace } from '@opentelemetry/api';
import { LiveFeed, MAX_FOLLOWERS, type Follower } from '../src/observability/live-feed.js';
import { RequestRecord } from '../src/observability/request-record.js';

function record(index: number, route = '/v1/messages'): RequestRecord {
  const made = new RequestRecord(`req_${index}`, 'POST', trace.wrapSpanContext(INVALID_SPAN_CONTEXT), undefined);
  made.route = route;
  made.status = 200;
  made.endedAt = made.startedAt + 5;
  return made;
}

/** A follower whose client reads everything (`reading`) or nothing: what it was sent stays unsent. */
class TestFollower implements Follower {
  received: string[] = [];
  unsentBytes = 0;
  dropped = false;

  constructor(private readonly reading: boolean) {}

  send(text: string): boolean {
    if (this.dropped) return false;
    this.received.push(text);
    if (!this.reading) this.unsentBytes += Buffer.byteLength(text);
    return true;
  }

  drop(): void {
    this.dropped = true;
  }
}

test('the feed keeps its last requests, newest first, however many pass', () => {
  const feed = new LiveFeed(50);
  for (let index = 0; index < 1_000; index += 1) feed.add(record(index));
  const recent = feed.recent();
  assert.equal(recent.length, 50);
  assert.equal(recent[0]!.request_id, 'req_999');
  assert.equal(recent[49]!.request_id, 'req_950');
});

test('a follower that stops reading is dropped; the one that reads gets every request', () => {
  const feed = new LiveFeed(100, 16 * 1024);
  const reader = new TestFollower(true);
  const stalled = new TestFollower(false);
  assert.ok(feed.follow(reader, ': opened\n\n'));
  assert.ok(feed.follow(stalled, ': opened\n\n'));
  for (let index = 0; index < 500; index += 1) feed.add(record(index));
  assert.equal(stalled.dropped, true);
  // It was dropped once it held more than its 16 KB: a few dozen entries, not the 500.
  assert.ok(stalled.received.length < 100, String(stalled.received.length));
  assert.equal(reader.dropped, false);
  assert.equal(reader.received.length, 501);
  assert.match(reader.received[500]!, /^event: request\ndata: \{"request_id":"req_499"/);
  assert.equal(feed.followerCount, 1);
});

test('the feed takes a bounded number of followers', () => {
  const feed = new LiveFeed(10);
  for (let index = 0; index < MAX_FOLLOWERS; index += 1) assert.ok(feed.follow(new TestFollower(true), ''));
  assert.equal(feed.follow(new TestFollower(true), ''), false);
  feed.close();
  assert.equal(feed.followerCount, 0);
});

test("probes, scrapes and the console's own reads are not kept", () => {
  const feed = new LiveFeed(10);
  for (const route of ['/health', '/ready', '/metrics', '/v1/admin/requests', '/console', '/console/:file'])
    feed.add(record(0, route));
  assert.deepEqual(feed.recent(), []);
  feed.add(record(1, '/v1/models'));
  assert.equal(feed.recent().length, 1);
});

test("a request's tool calls and how they became blocks reach its entry; none checked is null", () => {
  const feed = new LiveFeed(10);
  const checked = record(1);
  checked.toolCalls = 2;
  checked.toolCallOutcomes = { clean: 1, recovered_from_text: 1 };
  feed.add(checked);
  feed.add(record(2));
  const [unchecked, recovered] = feed.recent();
  assert.equal(recovered!.tool_calls, 2);
  assert.deepEqual(recovered!.tool_call_outcomes, { clean: 1, recovered_from_text: 1 });
  assert.equal(unchecked!.tool_calls, 0);
  assert.equal(unchecked!.tool_call_outcomes, null);
});
