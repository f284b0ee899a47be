/**
 * `GET /v1/admin/keys` (issue 37): every configured key by its id (never the key or its hash), its
 * models, its limits as the config gives them, and how they stand now: each per-minute bucket's
 * remaining and reset, each quota's use, and its requests in flight; from Redis with a shared
 * store (`source: "shared"`), else this replica's count (`"replica"`).
 */
import type { KeyConfig } from '../../config/key-config.js';
import type { Router } from '../../http/router.js';
import type { ClientKey } from '../../keys/client-key.js';
import type { KeyLimiter } from '../../limits/key-limiter.js';
import { resetText } from '../../limits/rate-limit-headers.js';
import { assertAdmin } from './admin-key.js';
import type { KeyEntry, KeysReply, LimitStanding } from './admin-replies.js';

export function registerKeysRoute(
  router: Router,
  limiter: KeyLimiter,
  identities: readonly ClientKey[],
  configured: readonly KeyConfig[],
): void {
  router.get('/v1/admin/keys', async (context) => {
    assertAdmin(context, 'GET /v1/admin/keys');
    const data = await Promise.all(
      identities.map(async (key): Promise<KeyEntry> => {
        const config = configured.find((entry) => entry.id === key.id);
        const standing = await limiter.standing(key);
        const limits: Record<string, LimitStanding> = {};
        for (const [name, reading] of Object.entries(standing.readings))
          limits[name] = { limit: reading.limit, remaining: reading.remaining, reset: resetText(reading.fullAt) };
        for (const [name, reading] of Object.entries(standing.quotas))
          limits[name] = {
            limit: reading.limit,
            used: reading.used,
            remaining: reading.remaining,
            reset: resetText(reading.resetsAt),
          };
        return {
          id: key.id,
          admin: key.admin,
          // A plain key (apiKeys) has no entry: every model, no limits.
          models: config?.models ?? null,
          limits: config?.limits ?? null,
          standing: { source: standing.source, in_flight: standing.inFlight, limits },
        };
      }),
    );
    const body: KeysReply = { data };
    return { body };
  });
}
