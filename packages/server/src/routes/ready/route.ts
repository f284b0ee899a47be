/**
 * `GET /ready`: whether every model would be answered now, for a load balancer's or an
 * orchestrator's readiness probe (docs/deployment.md). 200 when every model is ready, 503
 * otherwise, both with each model's backends and their state. `/health` stays liveness: it
 * answers as long as the process serves.
 *
 * Like /health it needs no key, since probes carry none. So it names models and backends by
 * the names clients and logs already use, and says nothing of addresses, keys or causes: a
 * cause (a file path, an engine's message) goes to the log. Upstreams are probed at most once
 * per few seconds, however often it is asked (backends/readiness-probe.ts).
 */
import type { Router } from '../../http/router.js';
import type { ModelRegistry } from '../../models/model-registry.js';

export function registerReadyRoute(router: Router, registry: ModelRegistry): void {
  router.get('/ready', async () => {
    const models = await registry.readiness();
    const ready = models.every((model) => model.ready);
    return { status: ready ? 200 : 503, body: { ready, models } };
  });
}
