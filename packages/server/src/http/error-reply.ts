/**
 * Any thrown value -> status, envelope and headers. ServiceErrors carry their own code (the
 * edge's too: body too large, bad JSON, wrong content type); anything else is an unexpected 500
 * whose details stay in the log, not in the reply. Every message has the configured secrets and
 * addresses taken out (http/reply-redaction.ts).
 *
 * A ServiceError with a cause says less in its reply than its cause says (a backend's failure
 * names the model, its cause the address it could not reach or what an upstream answered to a
 * refused key): the cause goes to the log as `detail`, with the secrets taken out.
 */
import {
  ERROR_CODE_HEADER,
  errorEnvelope,
  ServiceError,
  type ErrorCode,
  type ErrorEnvelope,
} from '@model-messages/protocol';
import { NO_REDACTION, type ReplyRedaction } from './reply-redaction.js';

export interface ErrorReply {
  status: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
  /** The code the `mms-error-code` header names; a stream's error event carries it too. */
  code: ErrorCode;
  /** What `retry-after` says, in seconds, where it is sent. */
  retryAfterSeconds: number | undefined;
  /** True when the cause is ours (a 500 not deliberately raised): log it with its stack. */
  unexpected: boolean;
  /** What the reply leaves out, for the log (a ServiceError's cause), secrets taken out. */
  detail: string | undefined;
}

/** Causes within causes that the detail follows: an undici error wraps the system's. */
const CAUSE_DEPTH = 3;

function toServiceError(error: unknown): { serviceError: ServiceError; unexpected: boolean } {
  if (error instanceof ServiceError) return { serviceError: error, unexpected: false };
  return { serviceError: new ServiceError('internal', 'Internal server error'), unexpected: true };
}

export function errorReply(error: unknown, requestId: string, redaction: ReplyRedaction = NO_REDACTION): ErrorReply {
  const { serviceError, unexpected } = toServiceError(error);
  const headers: Record<string, string> = { ...serviceError.headers, [ERROR_CODE_HEADER]: serviceError.code };
  if (serviceError.retryAfterSeconds !== undefined) headers['retry-after'] = String(serviceError.retryAfterSeconds);
  if (serviceError.shouldRetry === false) headers['x-should-retry'] = 'false';
  return {
    status: serviceError.status,
    body: errorEnvelope(serviceError.type, redaction.forReply(serviceError.message), requestId),
    headers,
    code: serviceError.code,
    retryAfterSeconds: serviceError.retryAfterSeconds,
    unexpected,
    detail:
      unexpected || serviceError.cause === undefined ? undefined : redaction.forLog(describeCause(serviceError.cause)),
  };
}

function describeCause(cause: unknown): string {
  const parts: string[] = [];
  for (let at = cause, depth = 0; at !== undefined && at !== null && depth < CAUSE_DEPTH; depth += 1) {
    if (!(at instanceof Error)) {
      parts.push(String(at));
      break;
    }
    const code = (at as NodeJS.ErrnoException).code;
    parts.push(`${at.name}: ${at.message}${typeof code === 'string' ? ` (${code})` : ''}`);
    at = at.cause;
  }
  return parts.join('; caused by ');
}
