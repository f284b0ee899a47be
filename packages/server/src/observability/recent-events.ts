/**
 * The backends' recent events (fallbacks, circuit changes, warnings, model loads), for the
 * console's Engines view (issue 37): which backend of a list fails, and with what code. Events are
 * rare (a request moves on, a circuit changes), so keeping them costs a request nothing; the last
 * RECENT_EVENTS are kept.
 */
import type { ServiceEvent } from './service-events.js';

export const RECENT_EVENTS = 200;

/** One event as GET /v1/admin/engines shows it: names and codes, never a message's text from a request. */
export interface RecentEvent {
  time: string;
  event: string;
  model: string | null;
  backend: string | null;
  /** The error code of a fallback, the state a circuit changed to, a warning's own words. */
  detail: string | null;
}

export class RecentEvents {
  private readonly events: RecentEvent[] = [];

  add(event: ServiceEvent): void {
    const recent = recentEvent(event);
    if (recent === undefined) return;
    this.events.push(recent);
    if (this.events.length > RECENT_EVENTS) this.events.shift();
  }

  /** Newest first. */
  all(): RecentEvent[] {
    return [...this.events].reverse();
  }
}

function recentEvent(event: ServiceEvent): RecentEvent | undefined {
  const time = new Date().toISOString();
  switch (event.type) {
    case 'fallback':
      return {
        time,
        event: 'fallback',
        model: event.model,
        backend: event.backend,
        detail: `${event.phase}: ${event.errorCode}`,
      };
    case 'circuit':
      return {
        time,
        event: 'circuit',
        model: event.model,
        backend: event.backend,
        detail: `${event.from} -> ${event.to}`,
      };
    case 'model-load':
      return {
        time,
        event: 'model-load',
        model: event.model,
        backend: event.backend,
        detail: `${event.seconds.toFixed(1)} s`,
      };
    case 'warning':
      return { time, event: 'warning', model: event.model, backend: null, detail: event.message };
    case 'health':
      return {
        time,
        event: 'health',
        model: event.model,
        backend: event.backend,
        detail: event.up ? 'up: its probe answered' : 'down: its probe failed',
      };
    case 'limit-store':
      return { time, event: 'limit-store', model: null, backend: null, detail: event.state };
    case 'regeneration':
    case 'model-download':
      return undefined;
    default:
      return event satisfies never;
  }
}
