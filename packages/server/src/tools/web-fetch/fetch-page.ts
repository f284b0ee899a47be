/**
 * One page over HTTP for the model: redirects followed by hand (each one checked again), a byte
 * cap, a time limit, and a clear error for what cannot be fetched. The body is decoded in the
 * encoding the page declares (body-encoding.ts), not always as UTF-8. A body that will not be read
 * (an error status, a type the model cannot read) is destroyed at once, not left to hold its
 * connection until the time limit.
 */
import type { Agent, Dispatcher } from 'undici';
import { undici } from '../../support/undici.js';
import type { AddressPolicy } from './address-policy.js';
import { decodeBody } from './body-encoding.js';
import { assertUrlAllowed } from './guarded-agent.js';

export interface FetchLimits {
  maxBytes: number;
  maxRedirects: number;
  timeoutMs: number;
}

export interface FetchedPage {
  url: string;
  contentType: string;
  body: string;
  /** The body was longer than maxBytes and was cut there. */
  truncated: boolean;
}

export class FetchFailure extends Error {
  constructor(
    readonly errorCode: 'url_not_accessible' | 'url_not_allowed' | 'unsupported_content_type' | 'too_many_requests',
    message: string,
  ) {
    super(message);
  }
}

/** `permitsUrl`: the tool's domain lists, asked again on every hop so a redirect cannot leave them. */
export async function fetchPage(
  start: URL,
  agent: Agent,
  policy: AddressPolicy,
  limits: FetchLimits,
  signal: AbortSignal,
  permitsUrl: (url: URL) => boolean = () => true,
): Promise<FetchedPage> {
  let url = start;
  for (let redirects = 0; ; redirects += 1) {
    assertUrlAllowed(url, policy);
    if (!permitsUrl(url))
      throw new FetchFailure(
        'url_not_allowed',
        `${url.hostname} is outside the tool's allowed_domains or in its blocked_domains`,
      );
    const response = await undici().request(url, {
      dispatcher: agent,
      method: 'GET',
      maxRedirections: 0,
      signal: AbortSignal.any([signal, AbortSignal.timeout(limits.timeoutMs)]),
      headers: {
        'user-agent': 'mms-web-fetch/1',
        accept: 'text/html, text/plain, application/json, text/markdown;q=0.9, */*;q=0.1',
      },
    } as never);
    const location = response.headers.location;
    if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
      await response.body.dump();
      if (redirects >= limits.maxRedirects)
        throw new FetchFailure('url_not_accessible', `more than ${limits.maxRedirects} redirects`);
      url = new URL(location, url);
      continue;
    }
    if (response.statusCode >= 400) {
      discard(response.body);
      throw new FetchFailure(
        response.statusCode === 429 ? 'too_many_requests' : 'url_not_accessible',
        `${url.href} answered ${response.statusCode}`,
      );
    }
    const contentType = String(response.headers['content-type'] ?? 'application/octet-stream').toLowerCase();
    if (!isReadableMediaType(contentType)) {
      discard(response.body);
      throw new FetchFailure('unsupported_content_type', `content type ${mediaTypeOf(contentType)} is not supported`);
    }
    const { bytes, truncated } = await readCapped(response.body, limits.maxBytes);
    const mediaType = mediaTypeOf(contentType);
    return {
      url: url.href,
      contentType,
      body: decodeBody(bytes, contentType, mediaType === 'text/html' || mediaType === 'application/xhtml+xml'),
      truncated,
    };
  }
}

/** Closes a body nobody will read. undici reports the abort this causes as an error on the body: expected here. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

export function mediaTypeOf(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

/** HTML (turned into markdown), text of any kind, and JSON: what page-to-text.ts can give a model. */
export function isReadableMediaType(contentType: string): boolean {
  const mediaType = mediaTypeOf(contentType);
  return (
    mediaType === 'application/xhtml+xml' ||
    mediaType.startsWith('text/') ||
    mediaType === 'application/json' ||
    mediaType.endsWith('+json')
  );
}

async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): void },
  maxBytes: number,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      return { bytes: Buffer.concat(chunks).subarray(0, maxBytes), truncated: true };
    }
  }
  return { bytes: Buffer.concat(chunks), truncated: false };
}
