/**
 * Brave Search API, web results: `GET {baseURL}/res/v1/web/search?q=...&count=N` with the key
 * in `X-Subscription-Token`. Each result has `title`, `url`, `description` (with `<strong>`
 * highlights), optional `extra_snippets`, and two dates: `page_age` (an ISO date of the page)
 * and `age` (a human phrase such as "3 days ago"); `page_age` is preferred, `age` is the fallback.
 * `count` is at most 20 and `q` at most 400 characters (Brave's documented limits). A request's
 * `user_location` country goes in `country` (a two-letter code), which Brave ranks results for.
 */
import { getJson, plainSnippet } from './provider-request.js';
import { SearchFailure, type SearchHit, type SearchOptions, type SearchProvider } from './search-provider.js';

const BRAVE_MAX_COUNT = 20;

interface BraveResult {
  url?: unknown;
  title?: unknown;
  description?: unknown;
  extra_snippets?: unknown;
  page_age?: unknown;
  age?: unknown;
}

export class BraveSearchProvider implements SearchProvider {
  readonly name = 'brave';
  private readonly endpoint: URL;

  constructor(
    private readonly apiKey: string,
    baseURL = 'https://api.search.brave.com',
  ) {
    this.endpoint = new URL('res/v1/web/search', baseURL.endsWith('/') ? baseURL : `${baseURL}/`);
  }

  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    const url = new URL(this.endpoint);
    url.searchParams.set('q', query);
    // Ask for the most Brave gives: the domain filter may drop some, and then the rest fill in.
    url.searchParams.set('count', String(BRAVE_MAX_COUNT));
    if (options.location?.country) url.searchParams.set('country', options.location.country.toUpperCase());
    const body = (await getJson(url, { 'x-subscription-token': this.apiKey }, options.signal, this.name)) as {
      web?: { results?: unknown };
    };
    const results = body?.web?.results;
    // A query with no web results has no `web` section at all.
    if (results === undefined) return [];
    if (!Array.isArray(results)) throw new SearchFailure('unavailable', 'brave: web.results is not a list');
    return (results as BraveResult[])
      .filter((result) => typeof result.url === 'string' && /^https?:\/\//i.test(result.url))
      .filter((result) => options.accepts(result.url as string))
      .slice(0, options.maxResults)
      .map((result) => ({
        url: result.url as string,
        title:
          typeof result.title === 'string' && result.title !== '' ? plainSnippet(result.title) : (result.url as string),
        pageAge: dateOf(result),
        content: snippets(result).join('\n').slice(0, options.maxCharacters),
      }));
  }

  async close(): Promise<void> {}
}

function dateOf(result: BraveResult): string | null {
  if (typeof result.page_age === 'string' && result.page_age !== '') return result.page_age;
  if (typeof result.age === 'string' && result.age !== '') return result.age;
  return null;
}

function snippets(result: BraveResult): string[] {
  const extra = Array.isArray(result.extra_snippets)
    ? result.extra_snippets.filter((snippet): snippet is string => typeof snippet === 'string')
    : [];
  return [typeof result.description === 'string' ? result.description : '', ...extra]
    .map(plainSnippet)
    .filter((text) => text !== '');
}
