/**
 * API key check: `x-api-key`, or `Authorization: Bearer <key>`. The key is compared with
 * timingSafeEqual against every configured key, so that neither the position of a mismatch nor
 * which key matched leaks through timing. A key of another length is compared with the
 * configured key itself instead, so that the time spent is the same whatever the length of
 * what was sent: the length of a configured key does not leak either. Keys never reach a log line.
 *
 * This runs on every request: a byte comparison is about a fifth of the cost of a SHA-256 of
 * the key, which an earlier version compared instead, for the same guarantees.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ServiceError } from '@model-messages/protocol';
import { keyId } from '../observability/key-id.js';

export class ApiKeyCheck {
  private readonly keys: Buffer[];
  /** Each key's id for the log (observability/key-id.ts), made once. */
  private readonly ids: string[];

  constructor(keys: readonly string[]) {
    this.keys = keys.map((key) => Buffer.from(key, 'utf8'));
    this.ids = keys.map(keyId);
  }

  /** The id of the configured key the headers carry (never the key); throws 401 when they carry none. */
  assertAuthorized(headers: IncomingHttpHeaders): string {
    const presented = presentedKey(headers);
    if (presented === undefined) {
      throw new ServiceError('authentication', 'x-api-key header is required');
    }
    const candidate = Buffer.from(presented, 'utf8');
    let matched = -1;
    for (let index = 0; index < this.keys.length; index += 1) {
      const known = this.keys[index]!;
      const sameLength = candidate.length === known.length;
      // Every configured key is compared, in full, whether or not an earlier one matched.
      const equal = timingSafeEqual(sameLength ? candidate : known, known);
      matched = sameLength && equal ? index : matched;
    }
    if (matched < 0) throw new ServiceError('authentication', 'invalid x-api-key');
    return this.ids[matched]!;
  }
}

function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return apiKey;
  const authorization = headers.authorization;
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  return bearer?.[1];
}
