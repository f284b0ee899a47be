/**
 * Who is calling: the key a request carried, as the edge found it (http/auth.ts). A plain key
 * (the config's apiKeys) may use every model, with no limits, and is named by its hash's prefix
 * (support/key-id.ts); a key of the config's `keys` by its own id, with its models and limits.
 */
import type { KeyConfig } from '../config/key-config.js';
import { keyId } from '../support/key-id.js';
import { ModelPermission } from './model-permission.js';

/** A key's limits, each undefined when not set. */
export interface KeyLimits {
  readonly requestsPerMinute: number | undefined;
  readonly inputTokensPerMinute: number | undefined;
  readonly outputTokensPerMinute: number | undefined;
  readonly concurrent: number | undefined;
  /** Input and output tokens per UTC day and month (issue 37). */
  readonly tokensPerDay: number | undefined;
  readonly tokensPerMonth: number | undefined;
}

export interface ClientKey {
  /** What the log, the metrics, /v1/usage and the limit store name the key by. */
  readonly id: string;
  /** The models it may use; undefined: every model. */
  readonly models: ModelPermission | undefined;
  /** Undefined when it has none, so that the request's path skips the limits in one test. */
  readonly limits: KeyLimits | undefined;
  /** May read GET /v1/usage and the admin endpoints (/v1/admin/..., the console). */
  readonly admin: boolean;
}

export function plainClientKey(key: string): ClientKey {
  return { id: keyId(key), models: undefined, limits: undefined, admin: false };
}

export function configuredClientKey(config: KeyConfig): ClientKey {
  const limits = config.limits;
  const hasLimits = limits !== undefined && Object.values(limits).some((value) => value !== undefined);
  return {
    id: config.id,
    models: config.models === undefined ? undefined : new ModelPermission(config.models),
    limits: hasLimits
      ? {
          requestsPerMinute: limits.requestsPerMinute,
          inputTokensPerMinute: limits.inputTokensPerMinute,
          outputTokensPerMinute: limits.outputTokensPerMinute,
          concurrent: limits.concurrent,
          tokensPerDay: limits.tokensPerDay,
          tokensPerMonth: limits.tokensPerMonth,
        }
      : undefined,
    admin: config.admin,
  };
}
