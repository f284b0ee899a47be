/**
 * The consistent hash ring of a list that keeps each conversation on one backend (issue 36,
 * `balance: "session"`). Every member stands on the ring at POINTS_PER_MEMBER points hashed from
 * its identity (its engine's address, member-identity.ts); a key belongs to the first member at
 * or after its own hash, clockwise, and falls to the next members in that order when its own
 * cannot take it. So:
 * - two replicas of mms with the same config build the same ring and send a conversation to the
 *   same engine without talking to each other (the hash is this file's, not the process's);
 * - a member that goes (down, open, or removed from the config) hands only its own keys to the
 *   members after its points, and a member that comes back takes back only those: the rest of the
 *   conversations keep their engine and its cache.
 */

/**
 * Points per member: with 160 (as ketama, the memcached ring, has), four members' shares of the
 * ring stay within a few percent of a quarter; with a handful of points one member could own
 * half of it.
 */
export const POINTS_PER_MEMBER = 160;

/**
 * A 32-bit hash of a string, the same in every process: FNV-1a over its UTF-16 code units, then
 * murmur3's finalizer, whose mixing spreads strings that differ only at their end (`#1`, `#2`)
 * across the whole ring, which FNV-1a alone does not.
 */
export function ringHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

export class HashRing {
  /** The points' hashes, ascending. */
  private readonly points: Uint32Array;
  /** The member (its index in the list) at each point. */
  private readonly owners: Uint16Array;
  private readonly memberCount: number;

  constructor(identities: readonly string[]) {
    this.memberCount = identities.length;
    const placed = identities.flatMap((identity, owner) =>
      Array.from({ length: POINTS_PER_MEMBER }, (_, point) => ({ hash: ringHash(`${identity}\n${point}`), owner })),
    );
    // Two points on the same hash go in member order, so that every process orders them alike.
    placed.sort((left, right) => left.hash - right.hash || left.owner - right.owner);
    this.points = Uint32Array.from(placed, (entry) => entry.hash);
    this.owners = Uint16Array.from(placed, (entry) => entry.owner);
  }

  /** Every member's index once, in the order `key` meets them walking clockwise from its hash. */
  walk(key: string): number[] {
    const order: number[] = [];
    if (this.memberCount === 0) return order;
    const seen = new Uint8Array(this.memberCount);
    const start = this.firstAtOrAfter(ringHash(key));
    for (let step = 0; order.length < this.memberCount; step += 1) {
      const owner = this.owners[(start + step) % this.points.length]!;
      if (seen[owner] === 1) continue;
      seen[owner] = 1;
      order.push(owner);
    }
    return order;
  }

  /** The index of the first point at or after `hash`, wrapping to the first point past the last. */
  private firstAtOrAfter(hash: number): number {
    let low = 0;
    let high = this.points.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.points[middle]! < hash) low = middle + 1;
      else high = middle;
    }
    return low === this.points.length ? 0 : low;
  }
}
