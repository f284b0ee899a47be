/**
 * Where a request's end is recorded, once per request (app.ts calls `end` when its reply has
 * been handed over, or its stream has ended): the access log line, the metrics and the span.
 * It also takes the backends' events from the registry, and the keys' limiter's, for the log and the metrics.
 * The console's Live and Engines views (issue 37) read the requests and events it keeps.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { KeyLimiter } from '../limits/key-limiter.js';
import type { ModelRegistry } from '../models/model-registry.js';
import { accessLogLine } from './access-log.js';
import { logEvent } from './event-log.js';
import { LiveFeed } from './live-feed.js';
import { RecentEvents } from './recent-events.js';
import type { RequestRecord } from './request-record.js';
import type { ServiceEvent } from './service-events.js';
import { ServiceMetrics, type BodyBudgetGauges } from './service-metrics.js';
import { endRequestSpan, startRequest } from './tracing.js';

export class RequestObserver {
  readonly metrics: ServiceMetrics;
  /** Requests as they finish, for the console (issue 37). */
  readonly liveFeed = new LiveFeed();
  /** The backends' recent events, for the console's Engines view. */
  readonly recentEvents = new RecentEvents();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly log: Logger,
    registry: ModelRegistry,
    limiter: KeyLimiter,
    bodyBudget: BodyBudgetGauges,
  ) {
    this.metrics = new ServiceMetrics(registry, limiter, bodyBudget);
    this.unsubscribe = registry.events.subscribe((event) => this.report(event));
  }

  /** An event of a backend, or of the keys' limiter: its metrics and its log line. */
  report(event: ServiceEvent): void {
    this.metrics.event(event);
    this.recentEvents.add(event);
    logEvent(this.log, event);
  }

  /** A request arrived: its record, with its span started. */
  begin(requestId: string, method: string, headers: IncomingHttpHeaders): RequestRecord {
    return startRequest(requestId, method, headers);
  }

  /** The request ended. A response closed before its reply was complete: its client went away, or was cut off. */
  end(record: RequestRecord, response: ServerResponse): void {
    record.endedAt = performance.now();
    const seconds = (record.endedAt - record.startedAt) / 1000;
    record.disconnected = response.destroyed && !response.writableFinished;
    // The line's object is built only when it is written: benchmarks and tests run silent.
    if (this.log.isLevelEnabled('info')) this.log.info(accessLogLine(record, seconds), 'request');
    this.metrics.requestEnded(record, seconds);
    endRequestSpan(record);
    this.liveFeed.add(record);
  }

  /** Stops taking the registry's events (the app closed). */
  close(): void {
    this.unsubscribe();
    this.liveFeed.close();
  }
}
