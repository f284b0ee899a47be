/**
 * `balance: "least-busy"` (issue 36): the member with the fewest steps in flight from this replica
 * of mms first; between members as busy, the one whose recent time to first output is lower (a
 * slower or more loaded engine answers later), one never measured counting as the fastest so that
 * it gets tried; between members equal in both, the list's order rotated per request, so that
 * identical idle replicas share the requests rather than the first taking them all.
 */
import type { RequestRouting } from '../backend.js';
import type { BalancePolicy, PassedOver } from './balance-policy.js';
import type { ListMember } from './list-member.js';
import { RoundRobinPolicy } from './round-robin-policy.js';

export class LeastBusyPolicy implements BalancePolicy {
  /** The order between members equal in load and latency: each request one further round. */
  private readonly turns = new RoundRobinPolicy();

  order(
    members: readonly ListMember[],
    routing: RequestRouting,
    passedOver: PassedOver | undefined,
  ): readonly ListMember[] {
    // Array.prototype.sort is stable: members equal in both keep the rotated order.
    return [...this.turns.order(members, routing, passedOver)].sort(
      (left, right) => left.inFlight - right.inFlight || (left.recentLatencyMs ?? 0) - (right.recentLatencyMs ?? 0),
    );
  }
}
