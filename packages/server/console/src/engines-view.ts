/**
 * Engines (issue 37): every model, its backends (each member of a fallback list), their readiness,
 * circuits, requests in flight and waiting, and their recent errors and latency; then the
 * backends' recent events. From GET /v1/admin/engines, every few seconds.
 */
import type { AdminApi } from './admin-api.js';
import type { EngineModel, EnginesReply, RecentFigures } from './admin-types.js';
import { clock, duration } from './format.js';
import { html } from './html.js';
import { usePolled } from './polled.js';

const REFRESH_MS = 5_000;

export function EnginesView({ api }: { api: AdminApi }) {
  const { reply: engines, problem } = usePolled(
    (signal) => api.get<EnginesReply>('/v1/admin/engines', signal),
    REFRESH_MS,
    [api],
  );
  if (engines === undefined) return html`<p class="muted">${problem ?? 'Asking the engines…'}</p>`;
  return html`
    ${problem === undefined ? null : html`<p class="bad">${problem}</p>`}
    <div class="engines" id="engines">
      ${engines.models.map((model) => html`<${ModelCard} model=${model} key=${model.id} />`)}
    </div>
    <section class="panel">
      <h2>Recent backend events</h2>
      ${
        engines.events.length === 0
          ? html`<p class="muted">None: no fallback, circuit change or warning since the service started.</p>`
          : html`
              <table>
                <thead>
                  <tr>
                    <th>time</th>
                    <th>event</th>
                    <th>model</th>
                    <th>backend</th>
                    <th>detail</th>
                  </tr>
                </thead>
                <tbody>
                  ${engines.events.map(
                    (event) =>
                      html`<tr>
                        <td>${clock(event.time)}</td>
                        <td>${event.event}</td>
                        <td>${event.model ?? ''}</td>
                        <td>${event.backend ?? ''}</td>
                        <td>${event.detail ?? ''}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            `
      }
    </section>
  `;
}

function ModelCard({ model }: { model: EngineModel }) {
  return html`
    <section class="panel" data-model=${model.id}>
      <div class="row" style=${{ justifyContent: 'space-between' }}>
        <h2 style=${{ margin: 0 }}>${model.id}</h2>
        <span class=${model.ready ? 'badge ok' : 'badge bad'}>${model.ready ? 'ready' : 'not ready'}</span>
      </div>
      <p class="muted">${summary(model)}</p>
      <table>
        <thead>
          <tr>
            <th>backend</th>
            <th>state</th>
            <th>circuit</th>
            <th class="number">in flight</th>
            <th class="number">recent</th>
            <th>errors</th>
            <th class="number">first token p50 / p95</th>
            <th class="number">duration p50 / p95</th>
          </tr>
        </thead>
        <tbody>
          ${model.backends.map(
            (backend) => html`
              <tr>
                <td>${backend.backend}</td>
                <td class=${backend.ready ? 'ok' : 'bad'}>${backend.state}</td>
                <td class=${backend.circuit === 'open' ? 'bad' : ''}>${backend.circuit ?? '–'}</td>
                <td class="number">${backend.in_flight ?? '–'}</td>
                <td class="number">${backend.recent.requests}</td>
                <td class=${Object.keys(backend.recent.errors).length > 0 ? 'bad' : 'muted'}>
                  ${errors(backend.recent)}
                </td>
                <td class="number">
                  ${duration(backend.recent.first_token_ms.p50)} / ${duration(backend.recent.first_token_ms.p95)}
                </td>
                <td class="number">
                  ${duration(backend.recent.duration_ms.p50)} / ${duration(backend.recent.duration_ms.p95)}
                </td>
              </tr>
            `,
          )}
        </tbody>
      </table>
    </section>
  `;
}

function summary(model: EngineModel): string {
  const failed = Object.values(model.recent.errors).reduce((sum, value) => sum + value, 0);
  const aliases = model.aliases.length > 0 ? [`aliases ${model.aliases.join(', ')}`] : [];
  return [
    ...aliases,
    `${model.in_flight} generating`,
    `${model.queued} waiting`,
    `${model.recent.requests} recent requests, ${failed} failed`,
  ].join(' · ');
}

function errors(recent: RecentFigures): string {
  const entries = Object.entries(recent.errors);
  return entries.length === 0 ? 'none' : entries.map(([code, times]) => `${code} ×${times}`).join(', ');
}
