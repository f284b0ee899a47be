/**
 * Any thrown value -> status, envelope and headers. ServiceErrors carry their own code; the
 * framework's own errors (body too large, bad JSON, wrong content type) are mapped by status;
 * anything else is an unexpected 500 whose details stay in the log, not in the reply.
 */
import { ERROR_CODE_HEADER, errorEnvelope, ServiceError, type ErrorEnvelope } from '@mms/protocol';

export interface ErrorReply {
  status: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
  /** True when the cause is ours (a 500 not deliberately raised): log it with its stack. */
  unexpected: boolean;
}

export function toServiceError(error: unknown): { serviceError: ServiceError; unexpected: boolean } {
  if (error instanceof ServiceError) return { serviceError: error, unexpected: false };
  const framework = error as { statusCode?: unknown; code?: unknown; message?: unknown };
  const status = typeof framework.statusCode === 'number' ? framework.statusCode : 500;
  const message = typeof framework.message === 'string' ? framework.message : 'request failed';
  if (status === 413) return { serviceError: new ServiceError('request_too_large', 'Request exceeds the maximum allowed number of bytes (32 MB).'), unexpected: false };
  if (status === 415) return { serviceError: new ServiceError('invalid_request', 'content-type: must be application/json'), unexpected: false };
  if (status >= 400 && status < 500) return { serviceError: new ServiceError('invalid_request', `Invalid request: ${message}`), unexpected: false };
  return { serviceError: new ServiceError('internal', 'Internal server error'), unexpected: true };
}

export function errorReply(error: unknown, requestId: string): ErrorReply {
  const { serviceError, unexpected } = toServiceError(error);
  const headers: Record<string, string> = { [ERROR_CODE_HEADER]: serviceError.code };
  if (serviceError.retryAfterSeconds !== undefined) headers['retry-after'] = String(serviceError.retryAfterSeconds);
  return { status: serviceError.status, body: errorEnvelope(serviceError.type, serviceError.message, requestId), headers, unexpected };
}
