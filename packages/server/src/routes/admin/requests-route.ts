/**
 * The requests as they finish (issue 37; observability/live-feed.ts): `GET /v1/admin/requests`,
 * the recent ones as JSON, newest first, optionally filtered; `GET /v1/admin/requests/stream`,
 * Server-Sent Events: a `recent` event with the recent ones, then a `request` event per request
 * as it finishes, and a comment line every PING_MS. Ids, names, codes, counts and times only:
 * never text of a request or a reply. A follower that stops reading is dropped by the feed.
 */
import { once } from 'node:events';
import { ServiceError } from '@model-messages/protocol';
import { WRITTEN, type Router } from '../../http/router.js';
import type { LiveFeed, LiveRequest } from '../../observability/live-feed.js';
import { assertAdmin, queryValue } from './admin-key.js';
import type { RequestsReply } from './admin-replies.js';

/** A comment line this often keeps an idle stream open through proxies. */
const PING_MS = 15_000;

export function registerRequestsRoutes(router: Router, feed: LiveFeed): void {
  router.get('/v1/admin/requests', async (context) => {
    assertAdmin(context, 'GET /v1/admin/requests');
    const keyId = queryValue(context, 'key_id');
    const model = queryValue(context, 'model');
    const failed = queryValue(context, 'failed') === 'true';
    const limit = Number(queryValue(context, 'limit') ?? 100);
    if (!Number.isInteger(limit) || limit < 1)
      throw new ServiceError('invalid_request', 'limit: must be a positive integer');
    const data = feed
      .recent()
      .filter(
        (request: LiveRequest) =>
          (keyId === undefined || request.key_id === keyId) &&
          (model === undefined || request.model === model) &&
          (!failed || request.status >= 400 || request.error_code !== null),
      )
      .slice(0, limit);
    const body: RequestsReply = { data };
    return { body };
  });

  router.get('/v1/admin/requests/stream', async (context) => {
    assertAdmin(context, 'GET /v1/admin/requests/stream');
    const response = context.response;
    const follower = {
      send: (text: string): boolean => {
        if (response.destroyed) return false;
        response.write(text);
        return true;
      },
      get unsentBytes(): number {
        return response.writableLength;
      },
      drop: (): void => {
        response.destroy();
      },
    };
    const opening = `event: recent\ndata: ${JSON.stringify({ data: feed.recent() })}\n\n`;
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'request-id': context.requestId,
    });
    if (!feed.follow(follower, opening)) {
      response.end(
        `event: error\ndata: ${JSON.stringify({ message: 'the live feed has all the followers it takes' })}\n\n`,
      );
      return WRITTEN;
    }
    const ping = setInterval(() => feed.ping(follower), PING_MS);
    try {
      await once(response, 'close');
    } finally {
      clearInterval(ping);
      feed.unfollow(follower);
    }
    return WRITTEN;
  });
}
