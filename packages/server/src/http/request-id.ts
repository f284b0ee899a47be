import { randomBytes } from 'node:crypto';

/** Ids are always ours: an incoming request-id header is never trusted or echoed. */
export function newRequestId(): string {
  return `req_${randomBytes(18).toString('base64url')}`;
}
