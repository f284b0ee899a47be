/**
 * An undici Agent that checks the address it actually connects to, after DNS: checking a name
 * and then fetching it would let DNS rebinding answer differently the second time. IP literals
 * never reach `lookup`, so `assertUrlAllowed` checks those before any request.
 */
import { promises as dns, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { Agent } from 'undici';
import { undici } from '../../support/undici.js';
import type { AddressPolicy } from './address-policy.js';
import { bareHost } from './bare-host.js';

export class UrlNotAllowedError extends Error {
  override name = 'UrlNotAllowedError';
}

/**
 * Every address a host name resolves to. The system resolver unless the service is given
 * another (tests stand in a resolver that changes its answer between calls, as DNS rebinding does).
 */
export type HostLookup = (hostname: string, options: LookupAllOptions) => Promise<LookupAddress[]>;

const systemLookup: HostLookup = (hostname, options) => dns.lookup(hostname, options);

export function guardedAgent(policy: AddressPolicy, timeoutMs: number, resolve: HostLookup = systemLookup): Agent {
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }).then(
      (list) => {
        const refused = list.find((entry) => !policy.permits(entry.address));
        if (refused || list.length === 0)
          return callback(
            new UrlNotAllowedError(`${hostname} resolves to ${refused?.address ?? 'nothing'}, which is not allowed`),
            '',
            0,
          );
        if (options.all) return callback(null, list);
        const first = list[0]!;
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
  return new (undici().Agent)({
    connect: { lookup, timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
}

/** Scheme and IP-literal checks, for the first URL and every redirect. */
export function assertUrlAllowed(url: URL, policy: AddressPolicy): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UrlNotAllowedError(`scheme ${url.protocol} is not allowed`);
  if (url.username || url.password) throw new UrlNotAllowedError('URLs with credentials are not allowed');
  const host = bareHost(url.hostname);
  if (isIP(host) !== 0 && !policy.permits(host)) throw new UrlNotAllowedError(`${host} is not an allowed address`);
  // Names (localhost included) are checked where they resolve, in the agent's lookup.
}
