/**
 * GET a JSON document from a search API the operator configured: the request's signal (which
 * carries the tool's time limit), a byte cap so a misbehaving endpoint cannot fill memory, and
 * every failure turned into the public error code a model can act on: 429 is
 * `too_many_requests` (try later), anything else `unavailable`.
 */
import { undici } from '../../support/undici.js';
import { SearchFailure } from './search-provider.js';

/** A results page is tens of kilobytes; far more than that is not a search API answering. */
const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

export async function getJson(
  url: URL,
  headers: Record<string, string>,
  signal: AbortSignal,
  provider: string,
): Promise<unknown> {
  let response;
  try {
    response = await undici().request(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'mms-web-search/1', ...headers },
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw signal.reason ?? error;
    throw new SearchFailure('unavailable', `${provider}: ${(error as Error).message}`, { cause: error });
  }
  if (response.statusCode === 429) {
    await response.body.dump();
    throw new SearchFailure('too_many_requests', `${provider} answered 429`);
  }
  if (response.statusCode !== 200) {
    await response.body.dump();
    throw new SearchFailure('unavailable', `${provider} answered ${response.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) {
        response.body.destroy();
        throw new SearchFailure('unavailable', `${provider} sent more than ${MAX_RESPONSE_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof SearchFailure) throw error;
    if (signal.aborted) throw signal.reason ?? error;
    throw new SearchFailure('unavailable', `${provider}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new SearchFailure('unavailable', `${provider} did not answer JSON`);
  }
}

/** Snippets from search APIs carry highlight markup (`<strong>`) and entities; a model reads text. */
export function plainSnippet(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos|nbsp|#39);/gi, (_entity, name: string) => {
      const lower = name.toLowerCase();
      if (lower.startsWith('#')) {
        const code = lower.startsWith('#x') ? parseInt(lower.slice(2), 16) : Number(lower.slice(1));
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
      }
      return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' }[lower] ?? '';
    })
    .replace(/\s+/g, ' ')
    .trim();
}
