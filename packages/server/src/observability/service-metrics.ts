/**
 * The service's Prometheus metrics (`GET /metrics`), one registry per app: a process may run
 * several apps (tests do). A request is counted once, when it ends, with plain additions on one
 * series found by its label values (request-observer.ts); a backend's events as they come. The
 * counts become prom-client metrics only when /metrics is scraped, and what is read from the
 * service's state (admission queues, circuits) is read then too: nothing runs per token, and
 * nothing hashes labels on a request's path.
 *
 * Every label value comes from a bounded set: registered routes, configured models and
 * backends, statuses, the error table's codes, the server tools and their result codes.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { FallbackBackend, type MemberState } from '../backends/fallback/fallback-backend.js';
import type { CircuitState } from '../backends/fallback/circuit-breaker.js';
import { SKIP_REASONS } from '../backends/fallback/list-member.js';
import type { KeyLimiter, LimiterStats } from '../limits/key-limiter.js';
import type { KeyModelUsage } from '../limits/usage-history.js';
import type { ModelRegistry } from '../models/model-registry.js';
import { BucketCounts } from './bucket-counts.js';
import { CollectedHistogram, type LabelledCounts } from './collected-histogram.js';
import {
  CountTable,
  DURATION_BOUNDS,
  FIRST_TOKEN_BOUNDS,
  SeriesIndex,
  sumBy,
  sumValues,
  type Labels,
  type RequestSeries,
} from './request-series.js';
import type { RequestRecord } from './request-record.js';
import type { ServiceEvent } from './service-events.js';

/** Seconds to load a model into an embedded engine. */
const MODEL_LOAD_BOUNDS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half-open'];
/** The route whose requests /v1/usage counts. */
const MESSAGES_ROUTE = '/v1/messages';

/**
 * What the metrics read of the app's budget of memory for request bodies
 * (http/body-memory-budget.ts). Named here rather than imported: the HTTP edge sits above
 * observability, whose request records it carries (issue 33).
 */
export interface BodyBudgetGauges {
  /** Memory held now by the bodies of requests in flight, in bytes. */
  readonly heldBytes: number;
  /** Requests refused because their body did not fit, since the app started. */
  readonly refusals: number;
}

/** The token counters: each a sum over the request series, by the labels it names. */
const TOKEN_COUNTERS: ReadonlyArray<{
  name: string;
  help: string;
  labelNames: ReadonlyArray<keyof RequestSeries['labels']>;
  value: (one: RequestSeries) => number;
}> = [
  {
    name: 'mms_input_tokens_total',
    help: "Prompt tokens of message requests a backend answered (its first output came), by API key id, as usage.input_tokens counts them: not those read from the engine's cache.",
    labelNames: ['key', 'model', 'backend'],
    value: (one) => one.inputTokens,
  },
  {
    name: 'mms_cache_read_input_tokens_total',
    help: "Prompt tokens of message requests that the engine's prefix cache held (usage.cache_read_input_tokens).",
    labelNames: ['model', 'backend'],
    value: (one) => one.cacheReadInputTokens,
  },
  {
    name: 'mms_cache_creation_input_tokens_total',
    help: 'Prompt tokens of message requests that the engine evaluated and kept for later requests (usage.cache_creation_input_tokens).',
    labelNames: ['model', 'backend'],
    value: (one) => one.cacheCreationInputTokens,
  },
  {
    name: 'mms_output_tokens_total',
    help: 'Output tokens of message requests, by API key id.',
    labelNames: ['key', 'model', 'backend'],
    value: (one) => one.outputTokens,
  },
];

export class ServiceMetrics {
  private readonly registry = new Registry();
  private readonly requests = new SeriesIndex();
  private readonly overloaded = new CountTable();
  private readonly serverToolCalls = new CountTable();
  private readonly toolCalls = new CountTable();
  private readonly fallbacks = new CountTable();
  private readonly circuitChanges = new CountTable();
  private readonly regenerations = new CountTable();
  private readonly modelLoads = new Map<string, LabelledCounts>();

  constructor(
    private readonly models: ModelRegistry,
    limiter: KeyLimiter,
    bodyBudget: BodyBudgetGauges,
  ) {
    processRegistry();
    const series = (): RequestSeries[] => this.requests.all();
    this.counter(
      'mms_requests_total',
      'Requests answered, by route, API key id, model, the backend that answered, HTTP status and error code (mms-error-code; a stream that failed after its headers keeps its 200 and has the code of its error event).',
      ['route', 'key', 'model', 'backend', 'status', 'code'],
      () => series().map((one) => ({ labels: one.labels, value: one.requests })),
    );
    this.histogram(
      'mms_request_duration_seconds',
      "Time from a request's arrival to its end: a JSON reply handed to the socket, a stream's last event.",
      () => sumBy(series(), ['route', 'model'], (one) => one.duration, DURATION_BOUNDS),
    );
    this.histogram(
      'mms_time_to_first_token_seconds',
      "Time from a message request's arrival to the backend's first output (its wait in the queue and the prefill included).",
      () => sumBy(series(), ['model', 'backend'], (one) => one.firstToken, FIRST_TOKEN_BOUNDS),
    );
    for (const { name, help, labelNames, value } of TOKEN_COUNTERS)
      this.counter(name, help, [...labelNames], () => sumValues(series(), labelNames, value));
    this.counter(
      'mms_overloaded_total',
      "Requests answered overloaded (529): a full queue, every backend of a list failing, or an engine's own 529; with no model, a body that did not fit in listen.maxBodyMemoryInFlight.",
      ['model'],
      () => this.overloaded.values(),
    );
    this.counter(
      'mms_body_budget_refusals_total',
      'Requests answered 529 because their body did not fit in what was left of listen.maxBodyMemoryInFlight (issue 31).',
      [],
      () => [{ labels: {}, value: bodyBudget.refusals }],
    );
    this.gauge(
      'mms_request_body_memory_bytes',
      'Request-body bytes held against listen.maxBodyMemoryInFlight: each body from its first byte (all of a declared length at once) until its request ends.',
      [],
      () => [{ labels: {}, value: bodyBudget.heldBytes }],
    );
    this.gauge('mms_queue_depth', 'Requests waiting for an admission slot.', ['model'], () =>
      this.models.entries.map((entry) => ({
        labels: { model: entry.profile.id },
        value: entry.admission.stats.queued,
      })),
    );
    this.gauge('mms_requests_in_flight', 'Requests holding an admission slot (generating).', ['model'], () =>
      this.models.entries.map((entry) => ({
        labels: { model: entry.profile.id },
        value: entry.admission.stats.active,
      })),
    );
    this.gauge(
      'mms_circuit_state',
      'The circuit of each backend of a fallback list: 1 for the state it is in, 0 for the others.',
      ['model', 'backend', 'state'],
      () =>
        this.memberValues((member) =>
          CIRCUIT_STATES.map((state) => ({ labels: { state }, value: member.circuit === state ? 1 : 0 })),
        ),
    );
    // Each replica of a model's backends list, as its balance sees it (issue 36): counted by
    // the list as requests go, read here.
    this.gauge(
      'mms_backend_in_flight',
      'Engine steps in flight on each backend of a backends list, from this replica of mms: what balance least-busy and session read.',
      ['model', 'backend'],
      () => this.memberValues((member) => [{ labels: {}, value: member.inFlight }]),
    );
    this.counter(
      'mms_backend_chosen_total',
      'Requests that began on each backend of a backends list: its policy chose it, or the request moved to it after another failed.',
      ['model', 'backend'],
      () => this.memberValues((member) => [{ labels: {}, value: member.chosen }]),
    );
    this.counter(
      'mms_backend_skipped_total',
      'Requests that passed over a backend of a backends list its policy put first, by why: open (its circuit), down (its last probe), busy (balance session: past its share of the requests in flight).',
      ['model', 'backend', 'reason'],
      () =>
        this.memberValues((member) =>
          SKIP_REASONS.map((reason) => ({ labels: { reason }, value: member.skipped[reason] })),
        ),
    );
    this.counter(
      'mms_backend_failures_total',
      'Retryable failures of each backend of a backends list (before or after its first output), the ones its circuit counts, by error code.',
      ['model', 'backend', 'code'],
      () => this.memberValues((member) => [...member.failures].map(([code, value]) => ({ labels: { code }, value }))),
    );
    this.counter(
      'mms_circuit_changes_total',
      "Changes of a fallback list's circuits, by the state changed to.",
      ['model', 'backend', 'state'],
      () => this.circuitChanges.values(),
    );
    this.counter(
      'mms_fallbacks_total',
      'Requests a backend of a fallback list failed before its first output, so that they moved on to the next.',
      ['model', 'backend', 'phase', 'code'],
      () => this.fallbacks.values(),
    );
    this.counter(
      'mms_server_tool_calls_total',
      'Server tool calls (web_search, web_fetch, code_execution; from the model or from code), by outcome: ok, or the error code of the result.',
      ['tool', 'outcome'],
      () => this.serverToolCalls.values(),
    );
    this.counter(
      'mms_tool_calls_total',
      "The model's tool calls, by how each became its block (issue 35): clean, as the engine gave it; recovered_from_text, left in the text in the model's own syntax; repaired, its input generated again after it failed its check; failed, failed again (a 502).",
      ['model', 'outcome'],
      () => this.toolCalls.values(),
    );
    this.counter(
      'mms_output_regenerations_total',
      "Schema-bound output that failed its check and was generated once more (a tool call's input, or a format answer).",
      ['model', 'backend', 'output'],
      () => this.regenerations.values(),
    );
    this.histogram('mms_model_load_seconds', 'Time to load a model into an embedded engine.', () =>
      this.modelLoads.values(),
    );
    this.counter(
      'mms_rate_limited_total',
      "Message requests answered 429 by their API key's limits, by key id and the limit reached (requests, inputTokens, outputTokens, concurrent, tokensPerDay, tokensPerMonth).",
      ['key', 'limit'],
      () => refusalValues(limiter.stats),
    );
    this.counter(
      'mms_limit_store_failures_total',
      "Requests whose key's limits could not be checked as the limits' store did not answer, by what followed (limits.onStoreError): allowed on this replica's own count of the limits, refused with 503, or unsettled (a reply's output tokens not charged).",
      ['outcome'],
      () => Object.entries(limiter.stats.storeFailures).map(([outcome, value]) => ({ labels: { outcome }, value })),
    );
    this.gauge(
      'mms_limit_store_reachable',
      '1 while the store of the keys\' limits (Redis) answers, 0 while it does not and each replica keeps its own count (onStoreError "allow") or refuses ("refuse"); 1 with the memory store.',
      [],
      () => [{ labels: {}, value: limiter.stats.storeReachable ? 1 : 0 }],
    );
  }

  /**
   * Message requests and their tokens since this app started, by API key id and model: what
   * GET /v1/usage answers (routes/usage/route.ts), and what the usage history is written from
   * (usage-recorder.ts). The same counts as the metrics': tokens count once a backend answered.
   */
  usage(): KeyModelUsage[] {
    const rows = new Map<string, KeyModelUsage>();
    for (const one of this.requests.all()) {
      const { route, key, model } = one.labels;
      if (route !== MESSAGES_ROUTE || model === '') continue;
      const id = `${key}\n${model}`;
      let row = rows.get(id);
      if (row === undefined) {
        row = { keyId: key, model, requests: 0, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0 };
        rows.set(id, row);
      }
      row.requests += one.requests;
      row.inputTokens += one.inputTokens;
      row.outputTokens += one.outputTokens;
      row.cacheReadInputTokens += one.cacheReadInputTokens;
    }
    return [...rows.values()];
  }

  /** The Prometheus text: the process's own metrics, then the service's. */
  async text(): Promise<string> {
    return `${await processRegistry().metrics()}\n${await this.registry.metrics()}`;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** A request ended (request-observer.ts), `seconds` after it arrived. */
  requestEnded(record: RequestRecord, seconds: number): void {
    const route = record.route ?? '';
    const key = record.keyId ?? '';
    const model = record.model ?? '';
    const backend = record.backend ?? '';
    const code = record.errorCode ?? '';
    const series = this.requests.find(route, key, model, backend, record.status, code);
    series.requests += 1;
    series.duration.observe(seconds);
    // Tokens count once a backend answered: a request refused or failed before its first output
    // had its prompt counted, but no engine generated from it.
    if (record.firstOutputAt !== undefined) {
      series.firstToken.observe((record.firstOutputAt - record.startedAt) / 1000);
      series.inputTokens += record.inputTokens ?? 0;
      series.outputTokens += record.outputTokens ?? 0;
      series.cacheReadInputTokens += record.cacheReadInputTokens ?? 0;
      series.cacheCreationInputTokens += record.cacheCreationInputTokens ?? 0;
    }
    if (code === 'overloaded') this.overloaded.add({ model });
    for (const [outcome, count] of Object.entries(record.toolCallOutcomes ?? {}))
      this.toolCalls.add({ model, outcome }, count);
    if (record.serverToolCalls === undefined) return;
    for (const call of record.serverToolCalls) this.serverToolCalls.add({ tool: call.tool, outcome: call.outcome });
  }

  /** A backend's event (service-events.ts). */
  event(event: ServiceEvent): void {
    switch (event.type) {
      case 'fallback':
        this.fallbacks.add({ model: event.model, backend: event.backend, phase: event.phase, code: event.errorCode });
        return;
      case 'circuit':
        this.circuitChanges.add({ model: event.model, backend: event.backend, state: event.to });
        return;
      case 'regeneration':
        this.regenerations.add({ model: event.model, backend: event.backend, output: event.output });
        return;
      case 'model-load': {
        const key = `${event.model}\n${event.backend}`;
        let series = this.modelLoads.get(key);
        if (series === undefined) {
          series = {
            labels: { model: event.model, backend: event.backend },
            counts: new BucketCounts(MODEL_LOAD_BOUNDS),
          };
          this.modelLoads.set(key, series);
        }
        series.counts.observe(event.seconds);
        return;
      }
      case 'model-download':
      case 'health':
      case 'warning':
      case 'limit-store':
        // The log's alone.
        return;
      default:
        event satisfies never;
    }
  }

  /** What `read` says of each member of every model's backends list, labelled with the model and the member. */
  private memberValues(
    read: (member: MemberState) => Array<{ labels: Labels; value: number }>,
  ): Array<{ labels: Labels; value: number }> {
    const values = [];
    for (const entry of this.models.entries) {
      if (!(entry.backend instanceof FallbackBackend)) continue;
      for (const member of entry.backend.memberStates())
        for (const { labels, value } of read(member))
          values.push({ labels: { model: entry.profile.id, backend: member.label, ...labels }, value });
    }
    return values;
  }

  private counter(
    name: string,
    help: string,
    labelNames: string[],
    read: () => Iterable<{ labels: Labels; value: number }>,
  ): void {
    new Counter({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { labels, value } of read()) this.inc(labels, value);
      },
    });
  }

  private gauge(
    name: string,
    help: string,
    labelNames: string[],
    read: () => Iterable<{ labels: Labels; value: number }>,
  ): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { labels, value } of read()) this.set(labels, value);
      },
    });
  }

  private histogram(name: string, help: string, read: () => Iterable<LabelledCounts>): void {
    this.registry.registerMetric(new CollectedHistogram(name, help, read).asMetric());
  }
}

function refusalValues(stats: LimiterStats): Array<{ labels: Labels; value: number }> {
  const values = [];
  for (const [key, byLimit] of stats.refusals)
    for (const [limit, value] of byLimit) values.push({ labels: { key, limit }, value });
  return values;
}

/**
 * The process's own metrics (CPU, memory, event loop lag, GC: prom-client's defaults), once per
 * process however many apps it runs, and made with the first app so that they count from then.
 */
let processMetrics: Registry | undefined;

function processRegistry(): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}
