/**
 * The access log: one line per request at `info`, written when the request ends (a stream when
 * its last event is out, or when its client went away: `disconnected`). Every field is an id,
 * a name, a code, a count or a time; none is request or response text, and the key is named by
 * its id (support/key-id.ts). docs/deployment.md has the table of fields.
 */
import type { ToolCallOutcome } from '../streaming/stream-part.js';
import type { RequestRecord } from './request-record.js';

export interface AccessLogLine {
  reqId: string;
  method: string;
  route: string | undefined;
  keyId: string | undefined;
  model: string | undefined;
  backend: string | undefined;
  status: number;
  errorCode: string | undefined;
  stopReason: string | null | undefined;
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  cacheReadInputTokens: number | undefined;
  cacheCreationInputTokens: number | undefined;
  firstTokenMs: number | undefined;
  durationMs: number;
  streamed: boolean;
  disconnected: boolean;
  serverToolCalls: number | undefined;
  /** The model's tool calls by outcome (issue 35: `{"clean": 2, "recovered_from_text": 1}`); absent when none was reported. */
  toolCalls: Partial<Record<ToolCallOutcome, number>> | undefined;
}

export function accessLogLine(record: RequestRecord, seconds: number): AccessLogLine {
  return {
    reqId: record.requestId,
    method: record.method,
    route: record.route,
    keyId: record.keyId,
    model: record.model,
    backend: record.backend,
    status: record.status,
    errorCode: record.errorCode,
    stopReason: record.stopReason,
    inputTokens: record.inputTokens,
    outputTokens: record.outputTokens,
    cacheReadInputTokens: record.cacheReadInputTokens,
    cacheCreationInputTokens: record.cacheCreationInputTokens,
    firstTokenMs: record.firstOutputAt === undefined ? undefined : tenths(record.firstOutputAt - record.startedAt),
    durationMs: tenths(seconds * 1000),
    streamed: record.streamed,
    disconnected: record.disconnected,
    serverToolCalls: record.serverToolCalls?.length,
    toolCalls: record.toolCallOutcomes,
  };
}

/** Milliseconds to a tenth: a refusal takes well under one. */
export function tenths(milliseconds: number): number {
  return Math.round(milliseconds * 10) / 10;
}
