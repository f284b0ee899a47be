/**
 * `GET /v1/admin/engines` (issue 37): every model, its backends (each member of a fallback list),
 * whether each is ready (as GET /ready says), its circuit, the model's requests in flight and
 * waiting, and recent figures per backend from the last requests the live feed keeps: requests,
 * errors by code, and the 50th and 95th percentiles of the time to first token and the duration.
 * The backends' recent events (fallbacks, circuit changes, warnings) come with it: a sick member
 * of a list shows there, as the requests it failed moved on to the next.
 */
import type { Router } from '../../http/router.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { tenths } from '../../observability/access-log.js';
import type { LiveFeed } from '../../observability/live-feed.js';
import type { RecentEvents } from '../../observability/recent-events.js';
import type { RequestRecord } from '../../observability/request-record.js';
import { assertAdmin } from './admin-key.js';
import type { EngineModel, EnginesReply, RecentFigures } from './admin-replies.js';

export function registerEnginesRoute(
  router: Router,
  registry: ModelRegistry,
  feed: LiveFeed,
  events: RecentEvents,
): void {
  router.get('/v1/admin/engines', async (context) => {
    assertAdmin(context, 'GET /v1/admin/engines');
    const readiness = await registry.readiness();
    const recent = feed.recentRecords().filter((record) => record.route === '/v1/messages');
    const models = registry.entries.map((entry, index): EngineModel => {
      const model = entry.profile.id;
      const ofModel = recent.filter((record) => record.model === model);
      return {
        id: model,
        aliases: entry.aliases,
        ready: readiness[index]!.ready,
        in_flight: entry.admission.stats.active,
        queued: entry.admission.stats.queued,
        recent: figures(ofModel),
        backends: readiness[index]!.backends.map((backend) => ({
          backend: backend.backend,
          ready: backend.ready,
          state: backend.state,
          // A list's member only (fallback-backend.ts readiness): its circuit and its requests in flight.
          circuit: backend.circuit ?? null,
          in_flight: backend.inFlight ?? null,
          recent: figures(ofModel.filter((record) => record.backend === backend.backend)),
        })),
      };
    });
    const body: EnginesReply = { models, events: events.all() };
    return { body };
  });
}

function figures(records: readonly RequestRecord[]): RecentFigures {
  const errors: Record<string, number> = {};
  const firstToken: number[] = [];
  const duration: number[] = [];
  for (const record of records) {
    if (record.errorCode !== undefined) errors[record.errorCode] = (errors[record.errorCode] ?? 0) + 1;
    if (record.firstOutputAt !== undefined) firstToken.push(record.firstOutputAt - record.startedAt);
    if (record.endedAt !== undefined) duration.push(record.endedAt - record.startedAt);
  }
  return {
    requests: records.length,
    errors,
    first_token_ms: { p50: percentile(firstToken, 0.5), p95: percentile(firstToken, 0.95) },
    duration_ms: { p50: percentile(duration, 0.5), p95: percentile(duration, 0.95) },
  };
}

/** The nearest-rank percentile, to a tenth of a millisecond; null with no values. */
function percentile(values: number[], fraction: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((first, second) => first - second);
  return tenths(sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!);
}
