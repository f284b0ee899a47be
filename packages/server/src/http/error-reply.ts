/**
 * Any thrown value -> status, envelope and headers. ServiceErrors carry their own code (the
 * edge's too: body too large, bad JSON, wrong content type); anything else is an unexpected 500
 * whose details stay in the log, not in the reply.
 */
import { ERROR_CODE_HEADER, errorEnvelope, ServiceError, type ErrorEnvelope } from '@mms/protocol';

export interface ErrorReply {
  status: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
  /** True when the cause is ours (a 500 not deliberately raised): log it with its stack. */
  unexpected: boolean;
}

function toServiceError(error: unknown): { serviceError: ServiceError; unexpected: boolean } {
  if (error instanceof ServiceError) return { serviceError: error, unexpected: false };
  return { serviceError: new ServiceError('internal', 'Internal server error'), unexpected: true };
}

export function errorReply(error: unknown, requestId: string): ErrorReply {
  const { serviceError, unexpected } = toServiceError(error);
  const headers: Record<string, string> = { [ERROR_CODE_HEADER]: serviceError.code };
  if (serviceError.retryAfterSeconds !== undefined) headers['retry-after'] = String(serviceError.retryAfterSeconds);
  return {
    status: serviceError.status,
    body: errorEnvelope(serviceError.type, serviceError.message, requestId),
    headers,
    unexpected,
  };
}
