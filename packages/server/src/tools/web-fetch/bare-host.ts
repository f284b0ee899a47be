/**
 * An IP address as the address checks read it: without the brackets a URL puts around an IPv6
 * literal (`[::1]`, RFC 3986 3.2.2) and without the zone a resolver may answer a scoped address
 * with (`fe80::1%eth0`, RFC 4007 11): the zone names an interface, not a network, and the
 * block lists and the IPv6 word parser know only the address.
 */
export function bareHost(host: string): string {
  return host.replace(/^\[|\]$/g, '').split('%')[0] ?? '';
}
