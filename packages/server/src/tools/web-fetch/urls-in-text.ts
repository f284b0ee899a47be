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
const TRAILING_PUNCTUATION = /[.,;:!?*_~]$/;

/** Absolute http(s) URLs written in `text`, normalised. */
export function urlsInText(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(ABSOLUTE_URL)) {
    const url = normalizedUrl(trimProse(match[0]));
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

/** `https://a.example/x).` in prose is `https://a.example/x`; a balanced `(...)` stays. */
function trimProse(candidate: string): string {
  let url = candidate;
  for (;;) {
    if (TRAILING_PUNCTUATION.test(url)) url = url.slice(0, -1);
    else if (url.endsWith(')') && count(url, '(') < count(url, ')')) url = url.slice(0, -1);
    else if (url.endsWith(']') && count(url, '[') < count(url, ']')) url = url.slice(0, -1);
    else return url;
  }
}

function count(text: string, character: string): number {
  return text.split(character).length - 1;
}
