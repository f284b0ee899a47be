/**
 * `balance: "failover"` (issue 6, the default): the members in the list's order, so the first
 * that is up takes every request and the others stand by for its failures.
 */
import type { BalancePolicy } from './balance-policy.js';
import type { ListMember } from './list-member.js';

export class FailoverPolicy implements BalancePolicy {
  order(members: readonly ListMember[]): readonly ListMember[] {
    return members;
  }
}
