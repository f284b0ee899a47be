/**
 * `balance: "round-robin"` (issue 36): each request starts one member further round the list, the
 * spreading most load balancers do. It knows nothing of prefixes or load: the replay benchmark's
 * baseline (docs/benchmarks.md), for engines without a prefix cache worth keeping.
 */
import type { RequestRouting } from '../backend.js';
import { rotated, type BalancePolicy, type PassedOver } from './balance-policy.js';
import type { ListMember } from './list-member.js';

export class RoundRobinPolicy implements BalancePolicy {
  private next = 0;

  order(
    members: readonly ListMember[],
    _routing: RequestRouting,
    passedOver: PassedOver | undefined,
  ): readonly ListMember[] {
    const start = this.next;
    // A count before the request is no turn: the request that follows it takes this one.
    if (passedOver !== undefined) this.next = (start + 1) % members.length;
    return rotated(members, start);
  }
}
