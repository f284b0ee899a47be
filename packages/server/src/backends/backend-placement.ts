/**
 * The defaults that depend on a backend's place in its model's list (backend-defaults.ts says
 * which and why), applied by what each kind says of itself: its `admission`, and whether its
 * config has `firstByteTimeoutMs` (issue 33: no kind is named here).
 */
import type { BackendConfigInput } from './backend-config.js';
import {
  DEFAULT_FIRST_BYTE_TIMEOUT_BEFORE_FALLBACK_MS,
  DEFAULT_FIRST_BYTE_TIMEOUT_MS,
  DEFAULT_QUEUE,
  type WithPlacedDefaults,
} from './backend-defaults.js';
import { backendKindOf } from './backend-kinds.js';
import type { BalancePolicyName } from './fallback/balance-config.js';

/**
 * A model's backends in order (its one `backend`, or its `backends` list), with the defaults
 * applied. In a list that balances (issue 36) every backend has others to move to, whatever its
 * place, so each gets the first-byte limit of a backend with a fallback after it.
 */
export function withPlacedDefaults<T extends BackendConfigInput>(
  configs: readonly T[],
  balance: BalancePolicyName = 'failover',
): Array<WithPlacedDefaults<T>> {
  const primary = configs[0];
  if (!primary) return [];
  const concurrency = primary.concurrency ?? backendKindOf(primary).admission.defaultConcurrency;
  const queue = primary.queue ?? DEFAULT_QUEUE;
  return configs.map((config, index) => {
    const kind = backendKindOf(config);
    const ownConcurrency = index > 0 && kind.admission.fallbackKeepsConcurrency;
    const placed = {
      ...config,
      concurrency: ownConcurrency ? (config.concurrency ?? kind.admission.defaultConcurrency) : concurrency,
      queue,
    };
    if (!('firstByteTimeoutMs' in kind.config.shape)) return placed as WithPlacedDefaults<T>;
    const nothingAfter = configs.length === 1 || (balance === 'failover' && index === configs.length - 1);
    const firstByteTimeoutMs =
      ('firstByteTimeoutMs' in config ? config.firstByteTimeoutMs : undefined) ??
      (nothingAfter ? DEFAULT_FIRST_BYTE_TIMEOUT_MS : DEFAULT_FIRST_BYTE_TIMEOUT_BEFORE_FALLBACK_MS);
    return { ...placed, firstByteTimeoutMs } as WithPlacedDefaults<T>;
  });
}

/**
 * Fields a fallback (any backend after the first of a list) may not set, with why: the config
 * check reports them by their path. A kind whose fallback keeps its own concurrency may set it.
 */
export function fallbackOnlyViolations(
  config: BackendConfigInput,
): Array<{ field: 'concurrency' | 'queue'; message: string }> {
  const refused = backendKindOf(config).admission.fallbackKeepsConcurrency
    ? (['queue'] as const)
    : (['concurrency', 'queue'] as const);
  const fields = refused.filter((field) => config[field] !== undefined);
  return fields.map((field) => ({
    field,
    message: `a fallback is admitted with its list: set ${field} on the first backend (the primary), whose value admits the whole list, and remove it here`,
  }));
}
