/**
 * One page over HTTP for the model: redirects followed by hand (each one checked again), a byte
 * cap, a time limit, and a clear error for what cannot be fetched.
 */
import { request, type Agent } from 'undici';
import type { AddressPolicy } from './address-policy.js';
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
export async function fetchPage(start: URL, agent: Agent, policy: AddressPolicy, limits: FetchLimits, signal: AbortSignal, permitsUrl: (url: URL) => boolean = () => true): Promise<FetchedPage> {
  let url = start;
  for (let redirects = 0; ; redirects += 1) {
    assertUrlAllowed(url, policy);
    if (!permitsUrl(url)) throw new FetchFailure('url_not_allowed', `${url.hostname} is outside the tool's allowed_domains or in its blocked_domains`);
    const response = await request(url, { dispatcher: agent, method: 'GET', maxRedirections: 0, signal: AbortSignal.any([signal, AbortSignal.timeout(limits.timeoutMs)]), headers: { 'user-agent': 'mms-web-fetch/1', accept: 'text/html, text/plain, application/json, text/markdown;q=0.9, */*;q=0.1' } } as never);
    const location = response.headers.location;
    if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
      await response.body.dump();
      if (redirects >= limits.maxRedirects) throw new FetchFailure('url_not_accessible', `more than ${limits.maxRedirects} redirects`);
      url = new URL(location, url);
      continue;
    }
    if (response.statusCode === 429) throw new FetchFailure('too_many_requests', `${url.href} answered 429`);
    if (response.statusCode >= 400) {
      await response.body.dump();
      throw new FetchFailure('url_not_accessible', `${url.href} answered ${response.statusCode}`);
    }
    const contentType = String(response.headers['content-type'] ?? 'application/octet-stream').toLowerCase();
    const { text, truncated } = await readCapped(response.body, limits.maxBytes);
    return { url: url.href, contentType, body: text, truncated };
  }
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      return { text: Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8'), truncated: true };
    }
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated: false };
}
