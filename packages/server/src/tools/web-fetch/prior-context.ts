/**
 * url_not_in_prior_context: web fetch takes only a URL that a trusted source already gave, so
 * that a prompt injected into a page or a search result cannot make the model send data to a
 * host of the attacker's choosing (`http://attacker/exfil?secret=...`).
 *
 * Trusted: what the caller wrote (the system prompt, user turns: text, documents, images and
 * client tool results) and what the service itself read from the web (the URLs of web search
 * results; the URL of a fetched page and the links in it). Never trusted: anything the model
 * wrote, in this turn or an earlier one (text, thinking, tool and server tool inputs), and the
 * output of code the model wrote (code execution results), because a call cannot vouch for
 * itself. URLs are compared whole, after normalisation (urls-in-text.ts), never as substrings.
 */
import type { ContentBlockParam, MessageRequest } from '@model-messages/protocol';
import { linksInPage, normalizedUrl, urlsInText } from './urls-in-text.js';

/**
 * Scans are kept per request and per result block: a turn may fetch many times, and the
 * request (up to 32 MB) and the pages already fetched do not change between those fetches.
 */
const requestUrls = new WeakMap<MessageRequest, ReadonlySet<string>>();
const blockUrls = new WeakMap<object, readonly string[]>();

/** True when `url` is one of the URLs the trusted parts of the conversation hold. */
export function isInPriorContext(url: string, request: MessageRequest, turnSoFar: readonly unknown[]): boolean {
  const wanted = normalizedUrl(url);
  if (wanted === undefined) return false;
  return urlsOfRequest(request).has(wanted) || turnSoFar.some((block) => urlsOfResult(block).includes(wanted));
}

/** Every trusted URL, as one set (for tests and logs; a fetch asks `isInPriorContext`). */
export function trustedUrls(request: MessageRequest, turnSoFar: readonly unknown[]): Set<string> {
  return new Set([...urlsOfRequest(request), ...turnSoFar.flatMap((block) => urlsOfResult(block))]);
}

function urlsOfRequest(request: MessageRequest): ReadonlySet<string> {
  const known = requestUrls.get(request);
  if (known) return known;
  const urls = new Set<string>();
  const add = (found: Iterable<string>) => {
    for (const url of found) urls.add(url);
  };
  const system = request.system;
  if (typeof system === 'string') add(urlsInText(system));
  else for (const block of system ?? []) add(urlsInText(block.text));
  for (const message of request.messages) {
    // A system message is the caller's, as the system prompt is.
    if (message.role === 'system') {
      if (typeof message.content === 'string') add(urlsInText(message.content));
      else for (const block of message.content ?? []) add(urlsInText(block.text));
      continue;
    }
    if (typeof message.content === 'string') {
      if (message.role === 'user') add(urlsInText(message.content));
      continue;
    }
    for (const block of message.content)
      add(message.role === 'user' ? callerBlockUrls(block) : serviceResultUrls(block));
  }
  requestUrls.set(request, urls);
  return urls;
}

function urlsOfResult(block: unknown): readonly string[] {
  if (block === null || typeof block !== 'object') return [];
  const known = blockUrls.get(block);
  if (known) return known;
  const urls = serviceResultUrls(block);
  blockUrls.set(block, urls);
  return urls;
}

/** A block the caller wrote in a user turn. */
function callerBlockUrls(block: ContentBlockParam): string[] {
  switch (block.type) {
    case 'text':
      return urlsInText(block.text);
    case 'image':
    case 'document':
      return sourceUrls(block.source);
    case 'tool_result':
      if (typeof block.content === 'string') return urlsInText(block.content);
      return (block.content ?? []).flatMap((inner) =>
        inner.type === 'text'
          ? urlsInText(inner.text)
          : inner.type === 'tool_reference'
            ? []
            : sourceUrls(inner.source),
      );
    default:
      // Model-written or service-written block types do not belong in a user turn; a caller
      // that puts one there is trusted no more for it than the model would be.
      return serviceResultUrls(block);
  }
}

function sourceUrls(source: { type: string; url?: string; data?: string; content?: unknown }): string[] {
  if (source.type === 'url' && source.url !== undefined)
    return [normalizedUrl(source.url)].filter((url) => url !== undefined);
  if (source.type === 'text' && source.data !== undefined) return urlsInText(source.data);
  if (source.type === 'content') {
    const content = source.content;
    if (typeof content === 'string') return urlsInText(content);
    if (Array.isArray(content))
      return content.flatMap((inner: { text?: unknown }) =>
        typeof inner.text === 'string' ? urlsInText(inner.text) : [],
      );
  }
  return [];
}

/**
 * URLs in a block the service wrote from the web: web search results and fetched pages. Every
 * other block type (text, thinking, tool inputs, code execution output) is the model's doing.
 */
function serviceResultUrls(block: unknown): string[] {
  const { type, content } = block as { type?: unknown; content?: unknown };
  if (type === 'web_search_tool_result' && Array.isArray(content)) {
    return content.flatMap((result: { type?: unknown; url?: unknown }) =>
      result?.type === 'web_search_result' && typeof result.url === 'string'
        ? [normalizedUrl(result.url)].filter((url) => url !== undefined)
        : [],
    );
  }
  if (type === 'web_fetch_tool_result') return fetchedPageUrls(content);
  return [];
}

function fetchedPageUrls(content: unknown): string[] {
  const page = content as {
    type?: unknown;
    url?: unknown;
    content?: { source?: { type?: unknown; data?: unknown } };
  } | null;
  if (page?.type !== 'web_fetch_result' || typeof page.url !== 'string') return [];
  const url = normalizedUrl(page.url);
  if (url === undefined) return [];
  const source = page.content?.source;
  const links = source?.type === 'text' && typeof source.data === 'string' ? linksInPage(source.data, url) : [];
  return [url, ...links];
}
