/**
 * Which addresses the service may connect to when it fetches a page for a model. A prompt must
 * not make the service reach loopback, private networks, link-local (cloud metadata at
 * 169.254.169.254), CGNAT, multicast, or any range of the IANA special-purpose registries that
 * is not globally reachable (RFC 6890 and its updates), in either family. IPv6 forms that carry
 * an IPv4 address are judged by that address (IPv4-mapped `::ffff:0:0/96`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`), or refused whole where the embedding is deprecated, obfuscated or local
 * (IPv4-compatible `::/96`, IPv4-translated `::ffff:0:0:0/96`, Teredo within `2001::/23`,
 * local-use NAT64 `64:ff9b:1::/48`). Operators (and tests serving pages on loopback) may allow
 * networks explicitly; nothing is allowed by default.
 */
import { BlockList, isIP } from 'node:net';
import { bareHost } from './bare-host.js';

const FORBIDDEN_IPV4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const FORBIDDEN_IPV6: Array<[string, number]> = [
  // Unspecified, loopback, and the deprecated IPv4-compatible form (::7f00:1 is 127.0.0.1).
  ['::', 96],
  // IPv4-translated (RFC 2765).
  ['::ffff:0:0:0', 96],
  // Local-use NAT64 (RFC 8215): the IPv4 inside is the operator's to route.
  ['64:ff9b:1::', 48],
  // Discard-only (RFC 6666) and the dummy prefix (RFC 9780).
  ['100::', 64],
  ['100:0:0:1::', 64],
  // IETF protocol assignments: Teredo 2001::/32 (its client address is obfuscated), benchmarking, ORCHID.
  ['2001::', 23],
  // Documentation (RFC 3849, RFC 9637).
  ['2001:db8::', 32],
  ['3fff::', 20],
  // SRv6 segment identifiers (RFC 9602).
  ['5f00::', 16],
  // Unique local, link-local, the deprecated site-local, multicast.
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

const forbidden = new BlockList();
for (const [network, prefix] of FORBIDDEN_IPV4) forbidden.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of FORBIDDEN_IPV6) forbidden.addSubnet(network, prefix, 'ipv6');

export class AddressPolicy {
  private readonly allowed = new BlockList();

  /** `allowNetworks`: CIDR strings such as `127.0.0.1/32` or `fd00::/8`. */
  constructor(allowNetworks: readonly string[] = []) {
    for (const network of allowNetworks) {
      const [address = '', prefix] = network.split('/');
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      this.allowed.addSubnet(address, prefix === undefined ? (family === 'ipv6' ? 128 : 32) : Number(prefix), family);
    }
  }

  /** True when the service may connect to `address` (an IP literal). */
  permits(address: string): boolean {
    const host = bareHost(address);
    const family = isIP(host);
    if (family === 4) return this.allowed.check(host, 'ipv4') || !forbidden.check(host, 'ipv4');
    if (family !== 6) return false;
    if (this.allowed.check(host, 'ipv6')) return true;
    const embedded = embeddedIpv4(host);
    if (embedded !== undefined) return this.allowed.check(embedded, 'ipv4') || !forbidden.check(embedded, 'ipv4');
    return !forbidden.check(host, 'ipv6');
  }
}

/**
 * The IPv4 address an IPv6 address stands for: IPv4-mapped `::ffff:a.b.c.d`, NAT64
 * `64:ff9b::a.b.c.d` (RFC 6052) and 6to4 `2002:aabb:ccdd::/48` (RFC 3056); otherwise undefined.
 */
export function embeddedIpv4(address: string): string | undefined {
  const words = ipv6Words(address);
  if (!words) return undefined;
  const zerosUpTo = (end: number) => words.slice(0, end).every((word) => word === 0);
  if (zerosUpTo(5) && words[5] === 0xffff) return dottedQuad(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((word) => word === 0))
    return dottedQuad(words[6]!, words[7]!);
  if (words[0] === 0x2002) return dottedQuad(words[1]!, words[2]!);
  return undefined;
}

/** The eight 16-bit words of an IPv6 literal (brackets, zone and a dotted-quad tail allowed). */
export function ipv6Words(address: string): number[] | undefined {
  const host = bareHost(address).toLowerCase();
  if (isIP(host) !== 6) return undefined;
  const [head = '', tail] = host.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').flatMap(wordsOf));
  const before = parse(head);
  const after = tail === undefined ? [] : parse(tail);
  const missing = 8 - before.length - after.length;
  return [...before, ...Array<number>(tail === undefined ? 0 : missing).fill(0), ...after];
}

function wordsOf(group: string): number[] {
  if (isIP(group) !== 4) return [parseInt(group, 16)];
  const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
  return [(a << 8) | b, (c << 8) | d];
}

function dottedQuad(high: number, low: number): string {
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}
