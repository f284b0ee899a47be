/** Every `balance` policy by its config name (balance-config.ts), listed once (issue 36). */
import type { BalancePolicyName } from './balance-config.js';
import type { BalancePolicy } from './balance-policy.js';
import { FailoverPolicy } from './failover-policy.js';
import { LeastBusyPolicy } from './least-busy-policy.js';
import type { ListMember } from './list-member.js';
import { RoundRobinPolicy } from './round-robin-policy.js';
import { SessionPolicy } from './session-policy.js';

export function balancePolicy(
  name: BalancePolicyName,
  members: readonly ListMember[],
  loadEpsilon: number,
): BalancePolicy {
  switch (name) {
    case 'failover':
      return new FailoverPolicy();
    case 'round-robin':
      return new RoundRobinPolicy();
    case 'least-busy':
      return new LeastBusyPolicy();
    case 'session':
      return new SessionPolicy(members, loadEpsilon);
    default:
      return name satisfies never;
  }
}
