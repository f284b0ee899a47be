/**
 * Whether a reply keeps docs/errors.md's promises: every reply has a `request-id` header; an
 * error reply's body is `{"type":"error","error":{"type","message"},"request_id"}` with the
 * header's id, and an `mms-error-code` header whose row of ERROR_TABLE has the reply's status
 * and error.type. Answers what is broken, or undefined.
 */
import { ERROR_TABLE, type ErrorCode } from '@model-messages/protocol';
import type { RawReply } from './raw-exchange.js';

export function envelopeViolation(reply: RawReply): string | undefined {
  const requestId = reply.headers.get('request-id');
  if (requestId === undefined || requestId === '') return 'no request-id header';
  if (reply.status < 400) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(reply.body.toString('utf8'));
  } catch {
    return 'error body is not JSON';
  }
  const envelope = body as { type?: unknown; error?: { type?: unknown; message?: unknown }; request_id?: unknown };
  if (envelope.type !== 'error') return 'body type is not "error"';
  if (typeof envelope.error?.type !== 'string' || typeof envelope.error.message !== 'string')
    return 'error.type or error.message is not a string';
  if (envelope.request_id !== requestId) return 'request_id differs from the request-id header';
  const code = reply.headers.get('mms-error-code');
  if (code === undefined) return 'no mms-error-code header';
  const row = Object.hasOwn(ERROR_TABLE, code) ? ERROR_TABLE[code as ErrorCode] : undefined;
  if (row === undefined) return `mms-error-code ${code} is not in ERROR_TABLE`;
  if (row.status !== reply.status || row.type !== envelope.error.type)
    return `mms-error-code ${code} is ${row.status} ${row.type}, the reply ${reply.status} ${envelope.error.type}`;
  return undefined;
}
