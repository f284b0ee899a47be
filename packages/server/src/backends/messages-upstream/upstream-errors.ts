/**
 * The upstream's failures as this service's errors. An error envelope keeps its type and its
 * message (a 529 overloaded_error upstream is a 529 overloaded_error here, in a status or an
 * `event: error` alike), with its retry-after; the message is relayed shortened
 * (backends/relayed-text.ts). The exceptions are the errors that describe this service's own
 * configuration rather than the caller's request: the upstream refusing our key (401, 403,
 * authentication_error, permission_error) or not knowing the model we ask it for (404). The
 * caller can do nothing about those, so they are a 500 api_error naming the backend by its
 * model; a refused key relays none of the upstream's text, which may echo the key, and the
 * upstream's answer goes to the service's log only (the error's cause, http/error-reply.ts).
 *
 * `where` names the upstream in replies: by the model it serves (`the messages-upstream backend
 * of model mid`), never by its address, which only the log and the start-up lines show.
 */
import { ServiceError, type ErrorCode } from '@model-messages/protocol';
import { relayedText } from '../relayed-text.js';

/** Wire error type -> our code. Types a service may add later fall back on the status. */
const CODE_OF_TYPE: Record<string, ErrorCode> = {
  invalid_request_error: 'invalid_request',
  request_too_large: 'request_too_large',
  rate_limit_error: 'rate_limited',
  api_error: 'internal',
  timeout_error: 'timeout',
  overloaded_error: 'overloaded',
};

/** The upstream refuses the key this service sent it. */
const CREDENTIAL_TYPES: ReadonlySet<string> = new Set(['authentication_error', 'permission_error']);

export interface UpstreamErrorBody {
  type?: unknown;
  error?: { type?: unknown; message?: unknown };
  /** An upstream mms's error event: what its status reply's headers would say (protocol's StreamErrorExtras). */
  mms_error_code?: unknown;
  mms_retry_after?: unknown;
}

/**
 * An error envelope (from a status or an `event: error`) -> a ServiceError. `errorCode` is the
 * upstream's `mms-error-code` header, where it is an mms (http/error-reply.ts); `address`, the
 * upstream's, goes into the cause that the log shows.
 */
export function upstreamError(
  where: string,
  status: number | undefined,
  body: UpstreamErrorBody | undefined,
  retryAfter: string | undefined,
  errorCode?: string,
  address = 'the upstream',
): ServiceError {
  const type = typeof body?.error?.type === 'string' ? body.error.type : undefined;
  const message = typeof body?.error?.message === 'string' ? body.error.message : undefined;
  const answered = [type, status].filter((part) => part !== undefined).join(', ') || 'an error';
  if ((type !== undefined && CREDENTIAL_TYPES.has(type)) || status === 401 || status === 403) {
    return new ServiceError(
      'internal',
      `${where} was refused by its upstream (${answered}): check the backend's apiKey or apiKeyEnv; the upstream's answer is in the service's log`,
      // A configuration to fix, which no retry mends (issue 32).
      { cause: new Error(`${address} answered ${answered}: ${message ?? 'no message'}`), shouldRetry: false },
    );
  }
  if (type === 'not_found_error') {
    return new ServiceError(
      'internal',
      `${where}: its upstream does not serve the model it was asked for (${answered}): ${relayedText(message ?? 'no message')}; check the backend's model`,
      { shouldRetry: false },
    );
  }
  const code = codeOf(type, status, errorCode);
  const text =
    message === undefined
      ? `${where}: its upstream answered ${status ?? 'an error'} with no error message`
      : relayedText(message);
  const retryable = code === 'rate_limited' || code === 'overloaded';
  const retryAfterSeconds = parseRetryAfter(retryAfter);
  return new ServiceError(code, text, { retryAfterSeconds: retryable ? (retryAfterSeconds ?? 1) : undefined });
}

/**
 * An `event: error` from the upstream -> a ServiceError. An upstream mms opens its stream at
 * admission, so its failures before the first output come this way too, carrying what its
 * status reply's headers would have said (`mms_error_code`, `mms_retry_after`): they keep the
 * same meaning here, for a fallback list's decision and for our own caller's retry.
 */
export function upstreamEventError(where: string, event: UpstreamErrorBody): ServiceError {
  const retryAfter = typeof event.mms_retry_after === 'number' ? String(event.mms_retry_after) : undefined;
  const errorCode = typeof event.mms_error_code === 'string' ? event.mms_error_code : undefined;
  return upstreamError(where, undefined, event, retryAfter, errorCode);
}

function codeOf(type: string | undefined, status: number | undefined, errorCode: string | undefined): ErrorCode {
  // An upstream mms says "the model's output was invalid" with a 502 api_error and names the
  // code in its header: keep it apart from its 500s, so that a fallback list here does not
  // charge the upstream for it either. The status and type alone are not enough: a proxy or
  // gateway between us says "Bad Gateway" with the same 502, which is the upstream failing.
  // An `event: error` has no status: there the code comes inside the event, which only the
  // upstream itself writes, never a proxy (docs/decisions/0007, 0015).
  if (errorCode === 'model_output_invalid' && (status === 502 || (status === undefined && type === 'api_error')))
    return 'model_output_invalid';
  return (type !== undefined ? CODE_OF_TYPE[type] : undefined) ?? codeOfStatus(status);
}

function codeOfStatus(status: number | undefined): ErrorCode {
  if (status === 429) return 'rate_limited';
  if (status === 529 || status === 503) return 'overloaded';
  if (status === 413) return 'request_too_large';
  if (status === 400) return 'invalid_request';
  if (status === 504) return 'timeout';
  return 'internal';
}

function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : undefined;
}

/** The connection's own limits, which are this backend's timeouts. */
const TIMEOUT_CODES: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'no connection within connectTimeoutMs',
  UND_ERR_HEADERS_TIMEOUT: 'no response within firstByteTimeoutMs',
  UND_ERR_BODY_TIMEOUT: 'the stream was silent for longer than idleTimeoutMs',
};

/**
 * A failure of the connection itself -> a 504 timeout_error for the backend's time limits, a
 * 500 api_error naming the cause (refused, reset) otherwise. The system's message, which names
 * the upstream's address, stays in the cause, for the log.
 */
export function transportError(where: string, error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  const code = (error as { code?: unknown }).code;
  const reason = typeof code === 'string' ? code : (error as Error).name;
  const timeout = TIMEOUT_CODES[reason];
  if (timeout !== undefined)
    return new ServiceError('timeout', `${where} failed: ${timeout} (${reason})`, { cause: error });
  return new ServiceError('internal', `${where} failed: ${describeTransport(reason)}`, { cause: error });
}

function describeTransport(code: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED)';
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
      return `the connection was closed (${code})`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `its host name does not resolve (${code})`;
    default:
      return `the connection failed (${code})`;
  }
}
