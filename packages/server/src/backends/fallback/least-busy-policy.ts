/**
 * `balance: "least-busy"` (issue 36): the member with the fewest steps in flight from this replica
 * of mms first; between members as busy, the one whose recent time to first output is lower (a
 * slower or more loaded engine answers later), one never measured counting as the fastest so that
 * it gets tried; between members equal in both, the list's order rotated per request, so that
 * identical idle replicas share the requests rather than the first taking them all.
 */
import type { RequestRouting } from '../backend.js';
import { rotated, type BalancePolicy, type PassedOver } from './balance-policy.js';
import type { ListMember } from './list-member.js';

export class LeastBusyPolicy implements BalancePolicy {
  private next = 0;

  order(
    members: readonly ListMember[],
    _routing: RequestRouting,
    passedOver: PassedOver | undefined,
  ): readonly ListMember[] {
    const start = this.next;
    // A count before the request is no turn: the request that follows it takes this one.
    if (passedOver !== undefined) this.next = (start + 1) % members.length;
    // Array.prototype.sort is stable: members equal in both keep the rotated order.
    return rotated(members, start).sort(
      (left, right) => left.inFlight - right.inFlight || (left.recentLatencyMs ?? 0) - (right.recentLatencyMs ?? 0),
    );
  }
}
