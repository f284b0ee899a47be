/**
 * The replies node:http would otherwise write on its own, bare (an empty 400, 408 or 431 with no
 * request-id) or not at all (a CONNECT is closed), written here straight to the socket in the
 * envelope every other error has: `request-id`, `mms-error-code`, and `Connection: close`.
 * Which events lead here is in app.ts (`clientError`, `connect`); the rest node:http answers on
 * its own goes through app.ts's `handle` (a missing Host, an unsupported Expect).
 */
import type { Socket } from 'node:net';
import { ERROR_CODE_HEADER, errorEnvelope, ServiceError } from '@model-messages/protocol';
import { destroyAfterLinger } from './lingering-close.js';
import { reasonPhrase } from './reason-phrase.js';
import { newRequestId } from './request-id.js';

export interface ClientErrorLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/**
 * node:http's `clientError` -> the error to answer, or undefined for a connection that failed
 * with no request to answer (reset, or already written to). `requestInFlight`: the request's
 * headers had arrived, so a timeout is the whole request's.
 */
export function clientErrorOf(
  error: NodeJS.ErrnoException,
  limits: ClientErrorLimits,
  requestInFlight: boolean,
): ServiceError | undefined {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ServiceError(
        'request_timeout',
        requestInFlight
          ? `the request was not received in full within listen.requestTimeoutMs (${limits.requestTimeoutMs} ms)`
          : `the request's headers were not received within listen.headersTimeoutMs (${limits.headersTimeoutMs} ms)`,
      );
    case 'HPE_HEADER_OVERFLOW':
      return new ServiceError('headers_too_large', "the request's headers are larger than 16 KB");
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ServiceError('request_too_large', "the request body's chunk extensions are larger than 16 KB");
    default:
      return error.code?.startsWith('HPE_')
        ? new ServiceError('invalid_request', 'The request is not valid HTTP/1.1.')
        : undefined;
  }
}

/** Writes `error` as the connection's last reply and closes it, lingering for its client to read it (lingering-close.ts). */
export function writeSocketErrorReply(
  socket: Socket,
  error: ServiceError,
  extraHeaders: Record<string, string> = {},
): void {
  const requestId = newRequestId();
  const body = JSON.stringify(errorEnvelope(error.type, error.message, requestId));
  const headers: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'request-id': requestId,
    [ERROR_CODE_HEADER]: error.code,
    ...(error.retryAfterSeconds === undefined ? {} : { 'retry-after': error.retryAfterSeconds }),
    ...extraHeaders,
    connection: 'close',
  };
  let head = `HTTP/1.1 ${error.status} ${reasonPhrase(error.status)}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  socket.end(`${head}\r\n${body}`);
  destroyAfterLinger(socket);
}
