/**
 * One entry of a server tool's `allowed_domains` / `blocked_domains`: a host without a scheme
 * (`example.com`), optionally with a path (`example.com/blog`), as the public API documents. The
 * request rules refuse an entry that is not one (endpoint-rules.ts); the service's domain filter
 * (server/src/tools/domain-filter.ts) matches URLs against the parsed form. Pure: no I/O.
 */

export interface DomainEntry {
  /** Lower case, ASCII (punycode) form, without a trailing dot or a leading `*.`. */
  host: string;
  /** '' for a host entry, else the path without a trailing slash (`/blog`). */
  path: string;
}

/** The entry as host and path, or undefined when it is not a bare domain (a scheme, a query, spaces). */
export function parseDomainEntry(entry: string): DomainEntry | undefined {
  const trimmed = entry.trim();
  if (trimmed === '' || trimmed.includes('://') || /\s/.test(trimmed)) return undefined;
  let url: URL;
  try {
    // A leading `*.` says "and subdomains", which every entry means anyway.
    url = new URL(`http://${trimmed.replace(/^\*\./, '')}`);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.search || url.hash || url.hostname === '' || url.hostname === '.')
    return undefined;
  return { host: normalizeHost(url.hostname), path: url.pathname.replace(/\/+$/, '') };
}

/** Host names compare without case or a trailing dot (`Example.COM.` is `example.com`). */
export function normalizeHost(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}
