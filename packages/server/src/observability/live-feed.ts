/**
 * The console's Live view (issue 37): requests as they finish, for whoever follows them. The last
 * RECENT requests are kept as their records (request-record.ts), in a ring written in place, so
 * that a request's end costs one slot's assignment when nobody follows; the entry a follower sees
 * is made from the record when it is read, once for all followers. Like the access log, an entry
 * holds ids, names, codes, counts and times: never text of a request or a reply.
 *
 * Memory is bounded three ways: the ring's length, the number of followers, and what each
 * follower's connection may hold unsent. A follower that stops reading is dropped (its
 * connection closed) once it holds more than its share: the feed never waits for one, and the
 * requests never wait for the feed.
 */
import type { ToolCallOutcome } from '../streaming/stream-part.js';
import { tenths } from './access-log.js';
import type { RequestRecord } from './request-record.js';

/** Requests kept for a follower that arrives, and for the engines' recent figures. */
export const RECENT = 1_000;
/** Followers at once: each holds a connection and up to its share of unsent bytes. */
export const MAX_FOLLOWERS = 16;
/** What a follower's connection may hold unsent before it is dropped: about 2,000 entries. */
export const FOLLOWER_BUFFER_BYTES = 1024 * 1024;

/** One finished request as the console and /v1/admin/requests show it. */
export interface LiveRequest {
  request_id: string;
  /** When it ended, RFC 3339 with milliseconds. */
  time: string;
  method: string;
  route: string | null;
  key_id: string | null;
  model: string | null;
  backend: string | null;
  status: number;
  error_code: string | null;
  stop_reason: string | null;
  input_tokens: number | null;
  cache_read_input_tokens: number | null;
  cache_creation_input_tokens: number | null;
  output_tokens: number | null;
  first_token_ms: number | null;
  duration_ms: number;
  streamed: boolean;
  disconnected: boolean;
  /** Calls of the client's tools in the reply (tool_use blocks). */
  tool_calls: number;
  /**
   * How the model's calls became blocks (issue 35): `clean`, `recovered_from_text`, `repaired`,
   * `failed`, each with its count; null where the backend does not check calls.
   */
  tool_call_outcomes: Partial<Record<ToolCallOutcome, number>> | null;
  /** Server tool calls and how each ended: `ok` or the error code of its result. */
  server_tool_calls: Array<{ tool: string; outcome: string }>;
}

/** Where a follower's entries go: its connection, written without waiting. */
export interface Follower {
  /** Sends the text; false once the follower is gone or dropped. */
  send(text: string): boolean;
  /** Bytes written and not yet taken by the client. */
  readonly unsentBytes: number;
  /** Closes the follower's connection. */
  drop(): void;
}

/** The routes whose requests are not the service's traffic: probes, scrapes and the console's own. */
const QUIET_ROUTES = new Set(['/health', '/ready', '/metrics']);

export class LiveFeed {
  private readonly ring: Array<RequestRecord | undefined>;
  /** Where the next record goes. */
  private next = 0;
  private readonly followers = new Set<Follower>();
  /** performance.now() and Date.now() at one instant: a record's times become wall-clock times. */
  private readonly clockOffset = Date.now() - performance.now();

  constructor(
    private readonly capacity = RECENT,
    private readonly followerBufferBytes = FOLLOWER_BUFFER_BYTES,
  ) {
    this.ring = new Array<RequestRecord | undefined>(capacity);
  }

  /** A request ended (request-observer.ts): kept, and sent to the followers if there are any. */
  add(record: RequestRecord): void {
    const route = record.route;
    if (
      route !== undefined &&
      (QUIET_ROUTES.has(route) || route.startsWith('/v1/admin/') || route.startsWith('/console'))
    )
      return;
    this.ring[this.next] = record;
    this.next = (this.next + 1) % this.capacity;
    if (this.followers.size === 0) return;
    const text = `event: request\ndata: ${JSON.stringify(this.entry(record))}\n\n`;
    for (const follower of this.followers) this.sendTo(follower, text);
  }

  /** The requests kept, newest first. */
  recent(): LiveRequest[] {
    return this.recentRecords().map((record) => this.entry(record));
  }

  /** The records kept, newest first: the engines' recent figures read them. */
  recentRecords(): RequestRecord[] {
    const records: RequestRecord[] = [];
    for (let step = 1; step <= this.capacity; step += 1) {
      const record = this.ring[(this.next - step + this.capacity) % this.capacity];
      if (record === undefined) break;
      records.push(record);
    }
    return records;
  }

  /** A new follower, sent `opening` first; false when the feed has all the followers it takes. */
  follow(follower: Follower, opening: string): boolean {
    if (this.followers.size >= MAX_FOLLOWERS) return false;
    this.followers.add(follower);
    this.sendTo(follower, opening);
    return true;
  }

  unfollow(follower: Follower): void {
    this.followers.delete(follower);
  }

  /** A comment line to a follower, so that proxies and the browser keep its idle stream. */
  ping(follower: Follower): void {
    if (this.followers.has(follower)) this.sendTo(follower, ': ping\n\n');
  }

  get followerCount(): number {
    return this.followers.size;
  }

  /** The app closes: every follower's stream ends. */
  close(): void {
    for (const follower of this.followers) follower.drop();
    this.followers.clear();
  }

  private sendTo(follower: Follower, text: string): void {
    if (follower.unsentBytes > this.followerBufferBytes || !follower.send(text)) {
      this.followers.delete(follower);
      follower.drop();
    }
  }

  private entry(record: RequestRecord): LiveRequest {
    const endedAt = record.endedAt ?? record.startedAt;
    return {
      request_id: record.requestId,
      time: new Date(this.clockOffset + endedAt).toISOString(),
      method: record.method,
      route: record.route ?? null,
      key_id: record.keyId ?? null,
      model: record.model ?? null,
      backend: record.backend ?? null,
      status: record.status,
      error_code: record.errorCode ?? null,
      stop_reason: record.stopReason ?? null,
      input_tokens: record.inputTokens ?? null,
      cache_read_input_tokens: record.cacheReadInputTokens ?? null,
      cache_creation_input_tokens: record.cacheCreationInputTokens ?? null,
      output_tokens: record.outputTokens ?? null,
      first_token_ms: record.firstOutputAt === undefined ? null : tenths(record.firstOutputAt - record.startedAt),
      duration_ms: tenths(endedAt - record.startedAt),
      streamed: record.streamed,
      disconnected: record.disconnected,
      tool_calls: record.toolCalls ?? 0,
      tool_call_outcomes: record.toolCallOutcomes ?? null,
      server_tool_calls: record.serverToolCalls ?? [],
    };
  }
}
