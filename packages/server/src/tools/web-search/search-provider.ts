/**
 * What the web search tool needs from a search engine: a query in, ranked hits out. Providers
 * (an offline folder index, SearXNG, Brave) differ in everything else, so the tool only ever
 * sees this interface, and a failure only as one of the two public error codes it can become.
 */

export interface SearchHit {
  url: string;
  title: string;
  /** When the page was published or last changed, as the provider gives it; null when unknown. */
  pageAge: string | null;
  /** The text a model reads for this hit (a snippet or the passages that matched). */
  content: string;
}

export interface SearchOptions {
  /** The request's abort signal joined with the tool's time limit. */
  signal: AbortSignal;
  maxResults: number;
  /** Longest `content` per hit, in characters. */
  maxCharacters: number;
  /**
   * The tool's domain filter. Providers that can skip refused URLs before ranking (the folder
   * index) do, so that a narrow allow-list still fills `maxResults`; the tool filters again.
   */
  accepts(url: string): boolean;
  /**
   * Where the user is (the tool's `user_location`, issue 34), for a provider that ranks by place:
   * Brave takes the country; SearXNG and the folder index have nothing that takes it.
   */
  location?: { country?: string; city?: string; region?: string; timezone?: string };
}

export interface SearchProvider {
  /** For messages: `folder`, `searxng`, `brave`. */
  readonly name: string;
  search(query: string, options: SearchOptions): Promise<SearchHit[]>;
  close(): Promise<void>;
}

/** A search that failed in a way the model is told about, as a public error code. */
export class SearchFailure extends Error {
  override name = 'SearchFailure';

  constructor(
    readonly errorCode: 'too_many_requests' | 'unavailable',
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
