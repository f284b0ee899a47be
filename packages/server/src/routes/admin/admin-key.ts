/**
 * The admin endpoints (`/v1/admin/...`, issue 37) answer only a key with `admin: true`: they name
 * every key, model and backend, and every key's traffic. Any other key gets 403, as GET /v1/usage
 * does.
 */
import { ServiceError } from '@model-messages/protocol';
import type { RouteContext } from '../../http/router.js';

export function assertAdmin(context: RouteContext, endpoint: string): void {
  if (context.key?.admin !== true) throw new ServiceError('permission', `${endpoint} needs an admin API key`);
}

/** A query parameter's value, or undefined; the query is parsed only by the routes that read it. */
export function queryValue(context: RouteContext, name: string): string | undefined {
  return new URLSearchParams(context.query).get(name) ?? undefined;
}
