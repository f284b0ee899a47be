/**
 * `GET /metrics`: the service's metrics in the Prometheus text format
 * (observability/service-metrics.ts). It needs a key like /v1 does, unless the config says
 * `metrics: {"public": true}` (app.ts), for a scraper that cannot send one.
 */
import type { Router } from '../../http/router.js';
import type { ServiceMetrics } from '../../observability/service-metrics.js';

export function registerMetricsRoute(router: Router, metrics: ServiceMetrics): void {
  router.get('/metrics', async () => ({ text: await metrics.text(), contentType: metrics.contentType }));
}
