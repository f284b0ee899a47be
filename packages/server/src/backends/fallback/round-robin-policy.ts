/**
 * `balance: "round-robin"` (issue 36): each request starts one member further round the list, the
 * spreading most load balancers do. It knows nothing of prefixes or load: the replay benchmark's
 * baseline (docs/benchmarks.md), for engines without a prefix cache worth keeping.
 */
import { rotated, type BalancePolicy } from './balance-policy.js';
import type { ListMember } from './list-member.js';

export class RoundRobinPolicy implements BalancePolicy {
  private next = 0;

  order(members: readonly ListMember[]): readonly ListMember[] {
    const start = this.next;
    this.next = (start + 1) % members.length;
    return rotated(members, start);
  }
}
