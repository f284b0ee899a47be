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
/**
 * Markdown link and image targets (CommonMark, link destination): `](<target>)`, where anything
 * but a line end or an unescaped `<` or `>` may appear (Turndown writes an href with a space
 * so), or a bare `](target)` of backslash escapes (Turndown escapes an href's `(`, `)`, `<` and
 * `>`), other non-space characters, and bare balanced parentheses one level deep (hand-written
 * markdown: `.../wiki/Mercury_(planet)`). Each alternative begins on characters the others
 * cannot, an angle target reads no further than the next `<`, `>` or line end, and a bare one
 * no further than the second `(` after its `](`; as every `](` holds a `(` of its own, no stretch
 * of text is read by more than a few matches: the scan is linear in the text.
 */
const MARKDOWN_TARGET = /\]\(\s*(?:<((?:\\.|[^\\<>\n])*)>|((?:\\.|[^\s\\()<>]|\((?:\\.|[^\s\\()<>])*\))+))/g;
/** A backslash escape: any ASCII punctuation character may be escaped (CommonMark, 2.4). */
const MARKDOWN_ESCAPE = /\\([!-/:-@[-`{-~])/g;
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
 * Links of a fetched page: its markdown link targets resolved against the page's own URL
 * (Turndown keeps an anchor's `href` as written, so `/about` stays relative) and the absolute
 * URLs in the rest of its text. Both are read with markdown's backslash escapes undone, as
 * Turndown escapes `_`, `*`, `[` and `]` in text and parentheses in a target: otherwise
 * `some\_page` would vouch for `.../some`, a prefix, and refuse the real link.
 */
export function linksInPage(text: string, pageUrl: string): string[] {
  const found: string[] = [];
  let prose = '';
  let proseStart = 0;
  const targets = new RegExp(MARKDOWN_TARGET);
  for (let match = targets.exec(text); match !== null; match = targets.exec(text)) {
    // `\](` is a bracket in prose; the text after it may still hold a real link.
    if (isEscaped(text, match.index)) {
      targets.lastIndex = match.index + 1;
      continue;
    }
    const target = match[1] ?? match[2] ?? '';
    const url = target.length > MAX_CANDIDATE_LENGTH ? undefined : normalizedUrl(withoutEscapes(target), pageUrl);
    if (url) found.push(url);
    // A target is taken out of the prose, so that its title or quotes do not leave a prefix.
    prose += `${text.slice(proseStart, match.index)} `;
    proseStart = match.index + match[0].length;
  }
  prose += text.slice(proseStart);
  return [...urlsInText(withoutEscapes(prose)), ...found];
}

function withoutEscapes(markdown: string): string {
  return markdown.replace(MARKDOWN_ESCAPE, '$1');
}

/** True when the character at `index` follows an odd run of backslashes. */
function isEscaped(text: string, index: number): boolean {
  let start = index;
  while (start > 0 && text[start - 1] === '\\') start -= 1;
  return (index - start) % 2 === 1;
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
