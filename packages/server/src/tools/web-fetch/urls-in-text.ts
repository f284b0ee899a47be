/**
 * Whole URLs as web fetch compares them (url_not_in_prior_context): parsed by the WHATWG URL
 * parser, which lowercases scheme and host, drops a default port and resolves dot segments;
 * the fragment is dropped because it never reaches the server. Everything else, query included,
 * is part of the URL: a mention of `/a?x=1` does not vouch for `/a?x=2`, nor `/abc` for `/a`.
 */

/** An http(s) URL as a comparable string, or undefined when `text` is not one. */
export function normalizedUrl(text: string, base?: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.hash = '';
  return url.href;
}

/** Candidates in free text: a scheme, then anything that cannot end a URL in prose or JSON. */
const ABSOLUTE_URL = /\bhttps?:\/\/[^\s<>"'`\\^{}|]+/gi;
/** Markdown link and image targets, `](target)` or `](<target>)`: relative in converted HTML. */
const MARKDOWN_TARGET = /\]\(\s*<?([^\s<>()]+)>?/g;
/** Punctuation that ends a sentence around a URL more often than it ends the URL itself. */
const TRAILING_PUNCTUATION = new Set('.,;:!?*_~');
/**
 * Longer candidates are not URLs anyone can fetch (web fetch refuses a URL over 250 characters,
 * url_too_long), and skipping them keeps a huge run of URL characters in a 32 MB request from
 * reaching the URL parser. Eight times the fetch limit leaves room for a mention that
 * normalises shorter (dot segments, a default port).
 */
const MAX_CANDIDATE_LENGTH = 2048;

/** Absolute http(s) URLs written in `text`, normalised. */
export function urlsInText(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(ABSOLUTE_URL)) {
    const candidate = trimProse(match[0]);
    const url = candidate.length > MAX_CANDIDATE_LENGTH ? undefined : normalizedUrl(candidate);
    if (url) found.push(url);
  }
  return found;
}

/**
 * Links of a fetched page: its absolute URLs and its markdown link targets resolved against the
 * page's own URL (Turndown keeps an anchor's `href` as written, so `/about` stays relative).
 */
export function linksInPage(text: string, pageUrl: string): string[] {
  const found = urlsInText(text);
  for (const match of text.matchAll(MARKDOWN_TARGET)) {
    const url = normalizedUrl(match[1] ?? '', pageUrl);
    if (url) found.push(url);
  }
  return found;
}

/**
 * `https://a.example/x).` in prose is `https://a.example/x`; a balanced `(...)` stays. One walk
 * back from the end with running bracket counts, so the work is linear in the candidate: a
 * candidate of 40,000 closing brackets must not be re-counted once per bracket dropped.
 */
function trimProse(candidate: string): string {
  let parentheses = balance(candidate, '(', ')');
  let brackets = balance(candidate, '[', ']');
  let end = candidate.length;
  while (end > 0) {
    const last = candidate[end - 1]!;
    if (TRAILING_PUNCTUATION.has(last)) end -= 1;
    else if (last === ')' && parentheses < 0) {
      end -= 1;
      parentheses += 1;
    } else if (last === ']' && brackets < 0) {
      end -= 1;
      brackets += 1;
    } else break;
  }
  return candidate.slice(0, end);
}

/** Openers less closers. */
function balance(text: string, opener: string, closer: string): number {
  let difference = 0;
  for (const character of text) {
    if (character === opener) difference += 1;
    else if (character === closer) difference -= 1;
  }
  return difference;
}
