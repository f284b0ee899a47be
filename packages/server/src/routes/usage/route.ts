/**
 * `GET /v1/usage`: message requests and their input and output tokens per API key id and model,
 * since this service started (issue 20), for an admin key only (`keys[].admin`): a team's key
 * must not learn the other teams' names or traffic. Counted as the metrics count them
 * (observability/service-metrics.ts), by this replica alone: behind a load balancer, add up the
 * replicas' answers, or read the metrics, which carry the same counts by key.
 */
import { ServiceError } from '@model-messages/protocol';
import type { Router } from '../../http/router.js';
import type { ServiceMetrics } from '../../observability/service-metrics.js';

export interface UsageRow {
  key_id: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
}

export interface UsageReply {
  /** When the counts began: this service's start, RFC 3339. */
  since: string;
  data: UsageRow[];
}

export function registerUsageRoute(router: Router, metrics: ServiceMetrics): void {
  const since = new Date().toISOString();
  router.get('/v1/usage', async (context) => {
    if (context.key?.admin !== true) throw new ServiceError('permission', 'GET /v1/usage needs an admin API key');
    const data = metrics
      .usage()
      .map((row): UsageRow => ({
        key_id: row.keyId,
        model: row.model,
        requests: row.requests,
        input_tokens: row.inputTokens,
        output_tokens: row.outputTokens,
      }))
      .sort((first, second) => first.key_id.localeCompare(second.key_id) || first.model.localeCompare(second.model));
    const reply: UsageReply = { since, data };
    return { body: reply };
  });
}
