/**
 * What the admin endpoints answer (packages/server/src/routes/admin/), as the console reads it:
 * the server names them in routes/admin/admin-replies.ts, which this project cannot import, and
 * packages/server/test/admin-types-agree.ts fails the type check when the two differ.
 */

export interface LiveRequest {
  request_id: string;
  time: string;
  method: string;
  route: string | null;
  key_id: string | null;
  model: string | null;
  backend: string | null;
  status: number;
  error_code: string | null;
  stop_reason: string | null;
  input_tokens: number | null;
  cache_read_input_tokens: number | null;
  cache_creation_input_tokens: number | null;
  output_tokens: number | null;
  first_token_ms: number | null;
  duration_ms: number;
  streamed: boolean;
  disconnected: boolean;
  tool_calls: number;
  tool_call_outcomes: Partial<Record<'clean' | 'recovered_from_text' | 'repaired' | 'failed', number>> | null;
  server_tool_calls: Array<{ tool: string; outcome: string }>;
}

export type UsageRange = 'hour' | 'day' | 'month';

export interface UsageBucket {
  time: string;
  key_id: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
}

export interface UsageReply {
  range: UsageRange;
  bucket_seconds: number;
  from: string;
  to: string;
  data: UsageBucket[];
}

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

export interface RecentFigures {
  requests: number;
  errors: Record<string, number>;
  first_token_ms: { p50: number | null; p95: number | null };
  duration_ms: { p50: number | null; p95: number | null };
}

export interface EngineModel {
  id: string;
  aliases: string[];
  ready: boolean;
  in_flight: number;
  queued: number;
  recent: RecentFigures;
  backends: Array<{
    backend: string;
    ready: boolean;
    state: string;
    circuit: string | null;
    in_flight: number | null;
    recent: RecentFigures;
  }>;
}

export interface EngineEvent {
  time: string;
  event: string;
  model: string | null;
  backend: string | null;
  detail: string | null;
}

export interface EnginesReply {
  models: EngineModel[];
  events: EngineEvent[];
}
