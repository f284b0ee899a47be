/**
 * `balance: "session"` (issue 36): each conversation on one member, so that its engine holds its
 * prefix and a turn's long system prompt and tools are a cache read rather than a new prefill
 * (Claude Code sends 12,000 tokens and more of them with every turn). The conversation's key
 * (RequestRouting.conversationKey: its session header, its metadata.user_id, else a digest of its
 * fixed prefix) walks the hash ring (hash-ring.ts) and the first member on its way takes it.
 *
 * Bounded load (Mirrokni, Thorup and Zadimoghaddam, "Consistent Hashing with Bounded Loads",
 * 2018): a member already holding ceil((1 + loadEpsilon) x (in flight + 1) / members up) steps is
 * passed over for the next one on the ring, so that a hot conversation, or many on one member,
 * cannot sink it while others idle, and no member holds more than about 1 + loadEpsilon times the
 * mean. The counts are this replica's own: replicas of mms that agree on the ring agree on every
 * placement until one of them sees a member past its bound.
 */
import type { RequestRouting } from '../backend.js';
import type { BalancePolicy, PassedOver } from './balance-policy.js';
import { HashRing } from './hash-ring.js';
import type { ListMember } from './list-member.js';

export class SessionPolicy implements BalancePolicy {
  private readonly ring: HashRing;

  constructor(
    members: readonly ListMember[],
    private readonly loadEpsilon: number,
  ) {
    this.ring = new HashRing(members.map((member) => member.identity));
  }

  order(
    members: readonly ListMember[],
    routing: RequestRouting,
    passedOver: PassedOver | undefined,
  ): readonly ListMember[] {
    const walk = this.ring.walk(routing.conversationKey());
    let up = 0;
    let inFlight = 0;
    for (const member of members) {
      if (!member.usable) continue;
      up += 1;
      inFlight += member.inFlight;
    }
    const bound = Math.ceil(((1 + this.loadEpsilon) * (inFlight + 1)) / Math.max(1, up));
    const within: ListMember[] = [];
    let over: ListMember[] | undefined;
    /** A member that can take the request came on the walk: those past their bound after it were not passed over. */
    let taken = false;
    for (const index of walk) {
      const member = members[index]!;
      if (member.usable && member.inFlight >= bound) {
        (over ??= []).push(member);
        if (!taken) passedOver?.(member, 'busy');
      } else {
        within.push(member);
        taken ||= member.usable;
      }
    }
    return over === undefined ? within : [...within, ...over];
  }
}
