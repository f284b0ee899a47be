/**
 * `allowed_domains` / `blocked_domains` of the web search and web fetch tools, with the public
 * API's meaning. An entry (`example.com`, `example.com/blog`; parsed by the protocol's
 * `parseDomainEntry`) covers that host and every subdomain of it (`docs.example.com`, never
 * `notexample.com`); a path entry also needs the URL's path to start with that path at a segment
 * boundary. Matching ignores case (host and path), a trailing dot and ports; names compare in
 * their ASCII (punycode) form, which is what URL parsing gives on both sides.
 *
 * Setting both lists on one tool, or an entry that is not a bare domain, is refused with a 400
 * before a tool runs (protocol/src/endpoint-rules.ts), as the public API does. An empty
 * `allowed_domains` allows nothing: an allow-list fails closed.
 */
import { normalizeHost, parseDomainEntry, type DomainEntry } from '@model-messages/protocol';

export interface DomainLists {
  allowed_domains?: readonly string[] | null | undefined;
  blocked_domains?: readonly string[] | null | undefined;
}

function entryCovers(entry: DomainEntry, url: URL): boolean {
  const host = normalizeHost(url.hostname);
  if (host !== entry.host && !host.endsWith(`.${entry.host}`)) return false;
  if (entry.path === '') return true;
  const path = url.pathname.toLowerCase();
  const wanted = entry.path.toLowerCase();
  return path === wanted || path.startsWith(`${wanted}/`);
}

export class DomainFilter {
  /** Lets every URL through: the tool sets neither list. */
  static readonly none = new DomainFilter(undefined, []);

  private constructor(
    /** undefined: no allow-list; otherwise only URLs one of these covers pass. */
    private readonly allowed: readonly DomainEntry[] | undefined,
    private readonly blocked: readonly DomainEntry[],
  ) {}

  /** The filter a tool's lists describe. Entries that do not parse match nothing. */
  static fromLists(lists: DomainLists | undefined): DomainFilter {
    const parse = (entries: readonly string[]) => entries.flatMap((entry) => parseDomainEntry(entry) ?? []);
    const allowed = lists?.allowed_domains ?? undefined;
    const blocked = lists?.blocked_domains ?? [];
    if (allowed === undefined && blocked.length === 0) return DomainFilter.none;
    return new DomainFilter(allowed === undefined ? undefined : parse(allowed), parse(blocked));
  }

  /** True when the lists let `url` through. Under a list, a URL that does not parse never passes. */
  permits(url: string | URL): boolean {
    if (this === DomainFilter.none) return true;
    let parsed: URL;
    try {
      parsed = typeof url === 'string' ? new URL(url) : url;
    } catch {
      return false;
    }
    if (this.blocked.some((entry) => entryCovers(entry, parsed))) return false;
    return this.allowed === undefined || this.allowed.some((entry) => entryCovers(entry, parsed));
  }
}
