/**
 * Live (issue 37): requests as they finish, newest first, from GET /v1/admin/requests/stream;
 * filtered by key, model and outcome. Ids, names, codes, counts and times: the service sends no
 * text of a request or a reply.
 */
import type { AdminApi } from './admin-api.js';
import type { LiveRequest } from './admin-types.js';
import { clock, count, duration } from './format.js';
import { html } from './html.js';
import { useEffect, useState } from './preact-hooks.js';

/** Requests the view holds; older ones fall off. */
const SHOWN = 500;

export function LiveView({ api }: { api: AdminApi }) {
  const [requests, setRequests] = useState<LiveRequest[]>([]);
  const [connected, setConnected] = useState(false);
  const [keyFilter, setKeyFilter] = useState('');
  const [modelFilter, setModelFilter] = useState('');
  const [failedOnly, setFailedOnly] = useState(false);
  useEffect(() => {
    const controller = new AbortController();
    const follow = async (): Promise<void> => {
      while (!controller.signal.aborted) {
        try {
          await api.follow(
            '/v1/admin/requests/stream',
            (event) => {
              setConnected(true);
              if (event.event === 'recent') setRequests((JSON.parse(event.data) as { data: LiveRequest[] }).data);
              if (event.event === 'request') {
                const request = JSON.parse(event.data) as LiveRequest;
                setRequests((shown) => [request, ...shown].slice(0, SHOWN));
              }
            },
            controller.signal,
          );
        } catch {
          // Dropped (or the service restarted): follow again shortly.
        }
        setConnected(false);
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    };
    void follow();
    return () => controller.abort();
  }, [api]);
  const keys = [...new Set(requests.map((request) => request.key_id).filter((id): id is string => id !== null))];
  const models = [...new Set(requests.map((request) => request.model).filter((id): id is string => id !== null))];
  const shown = requests.filter(
    (request) =>
      (keyFilter === '' || request.key_id === keyFilter) &&
      (modelFilter === '' || request.model === modelFilter) &&
      (!failedOnly || request.status >= 400 || request.error_code !== null),
  );
  return html`
    <section class="panel">
      <div class="filters">
        <h2 style="margin: 0 12px 0 0">Requests as they finish</h2>
        <span class=${connected ? 'badge ok' : 'badge warn'} id="live-state">${connected ? 'live' : 'connecting'}</span>
        <select
          id="live-key"
          value=${keyFilter}
          onChange=${(event: Event) => setKeyFilter((event.target as HTMLSelectElement).value)}
        >
          <option value="">every key</option>
          ${keys.map((id) => html`<option value=${id}>${id}</option>`)}
        </select>
        <select
          id="live-model"
          value=${modelFilter}
          onChange=${(event: Event) => setModelFilter((event.target as HTMLSelectElement).value)}
        >
          <option value="">every model</option>
          ${models.map((id) => html`<option value=${id}>${id}</option>`)}
        </select>
        <label
          ><input type="checkbox" checked=${failedOnly} onChange=${() => setFailedOnly(!failedOnly)} /> failed
          only</label
        >
        <span class="muted">${shown.length} of ${requests.length}</span>
      </div>
      <table id="live-table">
        <thead>
          <tr>
            <th>time</th>
            <th>key</th>
            <th>model</th>
            <th>backend</th>
            <th>status</th>
            <th class="number">input</th>
            <th class="number">cache read</th>
            <th class="number">output</th>
            <th class="number">first token</th>
            <th class="number">duration</th>
            <th>tools</th>
          </tr>
        </thead>
        <tbody>
          ${shown.map((request) => html`<${RequestRow} request=${request} key=${request.request_id} />`)}
        </tbody>
      </table>
      ${requests.length === 0 ? html`<p class="muted">No request has finished since the service started.</p>` : null}
    </section>
  `;
}

function RequestRow({ request }: { request: LiveRequest }) {
  const failed = request.status >= 400 || request.error_code !== null;
  const tools = [
    request.tool_calls > 0 ? `${request.tool_calls} tool call${request.tool_calls === 1 ? '' : 's'}` : '',
    // How calls became blocks, where the engine's calls were checked; `clean` is the usual case.
    ...Object.entries(request.tool_call_outcomes ?? {})
      .filter(([outcome]) => outcome !== 'clean')
      .map(([outcome, count]) => `${count} ${outcome.replaceAll('_', ' ')}`),
    ...request.server_tool_calls.map((call) => `${call.tool}: ${call.outcome}`),
  ].filter(Boolean);
  return html`
    <tr data-request-id=${request.request_id}>
      <td>${clock(request.time)}</td>
      <td>${request.key_id ?? '–'}</td>
      <td>${request.model ?? request.route ?? '–'}</td>
      <td>${request.backend ?? '–'}</td>
      <td class=${failed ? 'bad' : 'ok'}>
        ${request.status}${request.error_code === null ? '' : ` ${request.error_code}`}${request.disconnected ? ' (client gone)' : ''}
      </td>
      <td class="number">${count(request.input_tokens)}</td>
      <td class="number">${count(request.cache_read_input_tokens)}</td>
      <td class="number">${count(request.output_tokens)}</td>
      <td class="number">${duration(request.first_token_ms)}</td>
      <td class="number">${duration(request.duration_ms)}</td>
      <td>${tools.join(', ')}</td>
    </tr>
  `;
}
