import { uniqueId } from '../support/unique-id.js';

/** Ids are always ours: an incoming request-id header is never trusted or echoed. */
export function newRequestId(): string {
  return uniqueId('req_');
}
