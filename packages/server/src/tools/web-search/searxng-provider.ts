/**
 * SearXNG, the self-hosted metasearch engine: `GET {baseURL}/search?q=...&format=json`. The JSON
 * format must be enabled in its settings (`search.formats`); without it SearXNG answers 403,
 * which reaches the model as `unavailable`.
 */
import { getJson, plainSnippet } from './provider-request.js';
import { SearchFailure, type SearchHit, type SearchOptions, type SearchProvider } from './search-provider.js';

interface SearxngResult {
  url?: unknown;
  title?: unknown;
  content?: unknown;
  publishedDate?: unknown;
}

export class SearxngSearchProvider implements SearchProvider {
  readonly name = 'searxng';
  private readonly endpoint: URL;

  constructor(baseURL: string) {
    // Relative to the base so that an instance served under a path (https://host/searx/) works.
    this.endpoint = new URL('search', baseURL.endsWith('/') ? baseURL : `${baseURL}/`);
  }

  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    const url = new URL(this.endpoint);
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    const body = (await getJson(url, {}, options.signal, this.name)) as { results?: unknown };
    if (!Array.isArray(body?.results))
      throw new SearchFailure('unavailable', 'searxng: the answer has no results list');
    return (body.results as SearxngResult[])
      .filter((result) => typeof result.url === 'string' && /^https?:\/\//i.test(result.url))
      .filter((result) => options.accepts(result.url as string))
      .slice(0, options.maxResults)
      .map((result) => ({
        url: result.url as string,
        title:
          typeof result.title === 'string' && result.title !== '' ? plainSnippet(result.title) : (result.url as string),
        pageAge: typeof result.publishedDate === 'string' && result.publishedDate !== '' ? result.publishedDate : null,
        content: typeof result.content === 'string' ? plainSnippet(result.content).slice(0, options.maxCharacters) : '',
      }));
  }

  async close(): Promise<void> {}
}
