/**
 * Usage (issue 37): tokens and requests per key and model over the last hour, day or month, from
 * the usage history (GET /v1/admin/usage), charted per bucket; and each key's limits and quotas
 * with what is left of them (GET /v1/admin/keys).
 */
import type { AdminApi } from './admin-api.js';
import type { KeyEntry, UsageRange, UsageReply } from './admin-types.js';
import { count, until } from './format.js';
import { html } from './html.js';
import { usePolled } from './polled.js';
import { useState } from './preact-hooks.js';
import { UsageChart, type ChartBar } from './usage-chart.js';

const RANGES: Array<{ range: UsageRange; title: string }> = [
  { range: 'hour', title: 'last hour' },
  { range: 'day', title: 'last day' },
  { range: 'month', title: 'last month' },
];

export function UsageView({ api }: { api: AdminApi }) {
  const [range, setRange] = useState<UsageRange>('hour');
  const [keyFilter, setKeyFilter] = useState('');
  const { reply, problem } = usePolled(
    (signal) =>
      Promise.all([
        api.get<UsageReply>(`/v1/admin/usage?range=${range}`, signal),
        api.get<{ data: KeyEntry[] }>('/v1/admin/keys', signal),
      ]),
    15_000,
    [api, range],
  );
  const usage = reply?.[0];
  const keys = reply?.[1].data ?? [];
  const rows = (usage?.data ?? []).filter((row) => keyFilter === '' || row.key_id === keyFilter);
  return html`
    <section class="panel">
      <div class="filters">
        <h2 style="margin: 0 12px 0 0">Tokens</h2>
        ${RANGES.map(
          (choice) =>
            html`<button
              class=${choice.range === range ? 'primary' : 'plain'}
              id=${`range-${choice.range}`}
              onClick=${() => setRange(choice.range)}
            >
              ${choice.title}
            </button>`,
        )}
        <select
          id="usage-key"
          value=${keyFilter}
          onChange=${(event: Event) => setKeyFilter((event.target as HTMLSelectElement).value)}
        >
          <option value="">every key</option>
          ${keys.map((key) => html`<option value=${key.id}>${key.id}</option>`)}
        </select>
        <span class="legend"><span class="input">input</span><span class="output">output</span></span>
      </div>
      ${problem === undefined ? null : html`<p class="bad">${problem}</p>`}
      ${usage === undefined ? null : html`<${UsageChart} bars=${bars(usage, rows)} label=${bucketLabel(usage.range)} />`}
      <${UsageTable} rows=${rows} />
    </section>
    <section class="panel">
      <h2>Keys, their limits and what is left</h2>
      <${KeysTable} keys=${keys} />
    </section>
  `;
}

/** Every bucket of the range, empty ones included, summed over the rows shown. */
function bars(usage: UsageReply, rows: UsageReply['data']): ChartBar[] {
  const span = usage.bucket_seconds * 1000;
  const byStart = new Map<number, ChartBar>();
  for (let start = Date.parse(usage.from); start <= Date.parse(usage.to); start += span)
    byStart.set(start, { start, input: 0, output: 0 });
  for (const row of rows) {
    const bar = byStart.get(Date.parse(row.time));
    if (bar === undefined) continue;
    bar.input += row.input_tokens;
    bar.output += row.output_tokens;
  }
  return [...byStart.values()];
}

function bucketLabel(range: UsageRange): (start: number) => string {
  return (start) => {
    const date = new Date(start);
    if (range === 'month') return date.toISOString().slice(5, 10);
    return date.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', hour12: false });
  };
}

function UsageTable({ rows }: { rows: UsageReply['data'] }) {
  const totals = new Map<
    string,
    { key: string; model: string; requests: number; input: number; output: number; cacheRead: number }
  >();
  for (const row of rows) {
    const id = `${row.key_id}\n${row.model}`;
    const total = totals.get(id) ?? {
      key: row.key_id,
      model: row.model,
      requests: 0,
      input: 0,
      output: 0,
      cacheRead: 0,
    };
    total.requests += row.requests;
    total.input += row.input_tokens;
    total.output += row.output_tokens;
    total.cacheRead += row.cache_read_input_tokens;
    totals.set(id, total);
  }
  if (totals.size === 0) return html`<p class="muted">No message request in this range.</p>`;
  return html`
    <table id="usage-table">
      <thead>
        <tr>
          <th>key</th>
          <th>model</th>
          <th class="number">requests</th>
          <th class="number">input tokens</th>
          <th class="number">cache read</th>
          <th class="number">output tokens</th>
        </tr>
      </thead>
      <tbody>
        ${[...totals.values()].map(
          (total) => html`
            <tr>
              <td>${total.key}</td>
              <td>${total.model}</td>
              <td class="number">${count(total.requests)}</td>
              <td class="number">${count(total.input)}</td>
              <td class="number">${count(total.cacheRead)}</td>
              <td class="number">${count(total.output)}</td>
            </tr>
          `,
        )}
      </tbody>
    </table>
  `;
}

/** The limits' names as the config writes them, in words. */
const LIMIT_WORDS: Readonly<Record<string, string>> = {
  requests: 'requests / minute',
  inputTokens: 'input tokens / minute',
  outputTokens: 'output tokens / minute',
  tokensPerDay: 'tokens / day (UTC)',
  tokensPerMonth: 'tokens / month (UTC)',
};

function KeysTable({ keys }: { keys: KeyEntry[] }) {
  return html`
    <table id="keys-table">
      <thead>
        <tr>
          <th>key</th>
          <th>models</th>
          <th>limit</th>
          <th class="number">left</th>
          <th></th>
          <th>full again</th>
          <th class="number">in flight</th>
        </tr>
      </thead>
      <tbody>
        ${keys.map((key) => {
          const limits = Object.entries(key.standing.limits);
          const concurrent = key.limits?.concurrent;
          const inFlight =
            concurrent === undefined ? count(key.standing.in_flight) : `${key.standing.in_flight} of ${concurrent}`;
          const identity = html`<td>${key.id}${key.admin ? html` <span class="badge">admin</span>` : null}</td>
            <td>${key.models?.join(', ') ?? 'every model'}</td>`;
          if (limits.length === 0)
            return html`<tr>
              ${identity}
              <td class="muted">no limits</td>
              <td></td>
              <td></td>
              <td></td>
              <td class="number">${inFlight}</td>
            </tr>`;
          return limits.map(
            ([name, standing], index) => html`
              <tr>
                ${
                  index === 0
                    ? identity
                    : html`<td></td>
                        <td></td>`
                }
                <td>${count(standing.limit)} ${LIMIT_WORDS[name] ?? name}</td>
                <td class="number">${count(standing.remaining)}</td>
                <td>
                  <div class=${standing.remaining === 0 ? 'meter bad' : 'meter'}>
                    <div style=${{ width: `${(100 * standing.remaining) / standing.limit}%` }}></div>
                  </div>
                </td>
                <td class="muted">${until(standing.reset)}</td>
                <td class="number">${index === 0 ? inFlight : ''}</td>
              </tr>
            `,
          );
        })}
      </tbody>
    </table>
  `;
}
