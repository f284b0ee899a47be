/**
 * `GET /v1/admin/usage?range=hour|day|month` (issue 37): requests and tokens per key id and model
 * in buckets of a minute, an hour or a day, from the usage history kept where the limits are
 * (limits/usage-history.ts): across replicas with Redis, and across restarts. This replica's
 * counts since its last write are written first, so that the answer includes them; another
 * replica's trail by at most observability/usage-recorder.ts's WRITE_EVERY_MS.
 */
import { ServiceError } from '@model-messages/protocol';
import type { Router } from '../../http/router.js';
import { USAGE_RANGES, firstBucket, type UsageHistoryStore, type UsageRange } from '../../limits/usage-history.js';
import type { UsageRecorder } from '../../observability/usage-recorder.js';
import { assertAdmin, queryValue } from './admin-key.js';
import type { UsageReply } from './admin-replies.js';

export function registerAdminUsageRoute(router: Router, recorder: UsageRecorder, history: UsageHistoryStore): void {
  router.get('/v1/admin/usage', async (context) => {
    assertAdmin(context, 'GET /v1/admin/usage');
    const range = queryValue(context, 'range') ?? 'hour';
    // Own names only: `in` would take `toString` and the other names every object inherits.
    if (!Object.hasOwn(USAGE_RANGES, range))
      throw new ServiceError('invalid_request', `range: must be one of ${Object.keys(USAGE_RANGES).join(', ')}`);
    const usageRange = range as UsageRange;
    await recorder.write();
    const now = Date.now();
    const buckets = await history.read(usageRange, now);
    const body: UsageReply = {
      range: usageRange,
      bucket_seconds: USAGE_RANGES[usageRange].spanMs / 1000,
      from: new Date(firstBucket(usageRange, now)).toISOString(),
      to: new Date(now).toISOString(),
      data: buckets.map((bucket) => ({
        time: new Date(bucket.bucket).toISOString(),
        key_id: bucket.keyId,
        model: bucket.model,
        requests: bucket.requests,
        input_tokens: bucket.inputTokens,
        output_tokens: bucket.outputTokens,
        cache_read_input_tokens: bucket.cacheReadInputTokens,
      })),
    };
    return { body };
  });
}
