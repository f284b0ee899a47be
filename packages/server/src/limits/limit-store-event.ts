/**
 * The store of the keys' limits (Redis) stopped answering, or answered again (key-limiter.ts), as
 * the log and the metrics are told of it; `detail`: the failure, which names no key. Declared
 * with the limits, so that the limiter reports without importing what observes it (issue 33).
 */
export interface LimitStoreEvent {
  type: 'limit-store';
  state: 'unreachable' | 'reachable';
  onStoreError: 'allow' | 'refuse';
  detail: string | undefined;
}
