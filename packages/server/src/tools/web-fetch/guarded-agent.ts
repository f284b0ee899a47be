/**
 * An undici Agent that checks the address it actually connects to, after DNS: checking a name
 * and then fetching it would let DNS rebinding answer differently the second time. IP literals
 * never reach `lookup`, so `assertUrlAllowed` checks those before any request.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent } from 'undici';
import type { AddressPolicy } from './address-policy.js';

export class UrlNotAllowedError extends Error {
  override name = 'UrlNotAllowedError';
}

export function guardedAgent(policy: AddressPolicy, timeoutMs: number): Agent {
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as LookupAddress[];
      const refused = list.find((entry) => !policy.permits(entry.address));
      if (refused || list.length === 0) return callback(new UrlNotAllowedError(`${hostname} resolves to ${refused?.address ?? 'nothing'}, which is not allowed`), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
  return new Agent({ connect: { lookup, timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
}

/** Scheme and IP-literal checks, for the first URL and every redirect. */
export function assertUrlAllowed(url: URL, policy: AddressPolicy): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlNotAllowedError(`scheme ${url.protocol} is not allowed`);
  if (url.username || url.password) throw new UrlNotAllowedError('URLs with credentials are not allowed');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && !policy.permits(host)) throw new UrlNotAllowedError(`${host} is not an allowed address`);
  // Names (localhost included) are checked where they resolve, in the agent's lookup.
}
