/**
 * What the admin endpoints answer, named once here for the routes that build the replies. The
 * console (packages/server/console, a browser project that cannot import the server's sources)
 * restates them in its admin-types.ts; packages/server/test/admin-types-agree.ts makes the type
 * check fail when the two differ.
 */
import type { UsageRange } from '../../limits/usage-history.js';
import type { LiveRequest } from '../../observability/live-feed.js';
import type { RecentEvent } from '../../observability/recent-events.js';

export type { LiveRequest, RecentEvent, UsageRange };

/** `GET /v1/admin/requests`: the recent requests, newest first. */
export interface RequestsReply {
  data: LiveRequest[];
}

/** Requests, errors by code, and time percentiles over a model's or backend's recent requests. */
export interface RecentFigures {
  requests: number;
  errors: Record<string, number>;
  first_token_ms: { p50: number | null; p95: number | null };
  duration_ms: { p50: number | null; p95: number | null };
}

export interface EngineBackend {
  backend: string;
  ready: boolean;
  state: string;
  /** A fallback or balanced list's member only: its circuit and its requests in flight. */
  circuit: string | null;
  in_flight: number | null;
  recent: RecentFigures;
}

export interface EngineModel {
  id: string;
  aliases: string[];
  ready: boolean;
  in_flight: number;
  queued: number;
  recent: RecentFigures;
  backends: EngineBackend[];
}

/** `GET /v1/admin/engines`. */
export interface EnginesReply {
  models: EngineModel[];
  events: RecentEvent[];
}

/** What a quota or bucket reads as. */
export interface LimitStanding {
  limit: number;
  remaining: number;
  used?: number;
  reset: string;
}

export interface KeyEntry {
  id: string;
  admin: boolean;
  models: string[] | null;
  limits: Record<string, number> | null;
  standing: { source: 'shared' | 'replica'; in_flight: number; limits: Record<string, LimitStanding> };
}

/** `GET /v1/admin/keys`. */
export interface KeysReply {
  data: KeyEntry[];
}

export interface UsageBucket {
  time: string;
  key_id: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
}

/** `GET /v1/admin/usage`. */
export interface UsageReply {
  range: UsageRange;
  bucket_seconds: number;
  from: string;
  to: string;
  data: UsageBucket[];
}
