/**
 * Which addresses the service may connect to when it fetches a page for a model. A prompt must
 * not make the service reach loopback, private networks, link-local (cloud metadata at
 * 169.254.169.254), CGNAT, multicast or reserved ranges, in either family; IPv4-mapped and NAT64
 * IPv6 forms are unwrapped first. Operators (and tests serving pages on loopback) may allow
 * networks explicitly; nothing is allowed by default.
 */
import { BlockList, isIP } from 'node:net';

const FORBIDDEN_IPV4: Array<[string, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const FORBIDDEN_IPV6: Array<[string, number]> = [
  ['::', 128], ['::1', 128], ['100::', 64], ['2001::', 32], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
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
    const unwrapped = embeddedIpv4(address) ?? address;
    const family = isIP(unwrapped) === 6 ? 'ipv6' : isIP(unwrapped) === 4 ? 'ipv4' : undefined;
    if (!family) return false;
    if (this.allowed.check(unwrapped, family)) return true;
    return !forbidden.check(unwrapped, family);
  }
}

/** The IPv4 address inside `::ffff:a.b.c.d`, `::ffff:xxxx:xxxx` or NAT64 `64:ff9b::/96`. */
export function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase().replace(/^\[|\]$/g, '');
  const match = lower.match(/^(?:::ffff:|64:ff9b::)(.+)$/);
  if (!match?.[1]) return undefined;
  const tail = match[1];
  if (isIP(tail) === 4) return tail;
  const words = tail.split(':');
  if (words.length !== 2 || !words.every((word) => /^[0-9a-f]{1,4}$/.test(word))) return undefined;
  const [high, low] = words.map((word) => parseInt(word, 16)) as [number, number];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}
