/**
 * The web search server tool (every version served: `web_search_20250305`, the one Claude Code's
 * WebSearch sends, `web_search_20260209` and `web_search_20260318`; issue 34), run by the service
 * over the configured provider, which gets the tool's `user_location` where it can use it. The result block has the public API's shape:
 * `{type: 'web_search_tool_result', tool_use_id, content: [{type: 'web_search_result', url,
 * title, page_age, encrypted_content}]}`, where `encrypted_content` carries the text a model
 * reads (signing/search-content.ts). Failures are the public error block with `invalid_tool_input`
 * (no query), `query_too_long`, `too_many_requests` (the provider answered 429) or `unavailable`
 * (no provider configured, or it failed or timed out); `max_uses_exceeded` is the loop's.
 * `allowed_domains` / `blocked_domains` filter the results (tools/domain-filter.ts). The results
 * together, URLs, titles and page ages included, fit this call's share of the turn's input
 * headroom (agent/context-budget.ts, fit-results.ts); a share too small for one result is
 * answered `max_uses_exceeded` without a search.
 */
import {
  isWebSearchTool,
  type MessageRequest,
  type ServerToolResultBlock,
  type ServerToolUseBlock,
  type UserLocation,
} from '@model-messages/protocol';
import { errorResultFor, serverToolError, serverToolRefusal } from '../../agent/server-tool-runner.js';
import { DomainFilter } from '../domain-filter.js';
import { createSearchProvider, type SearchProviderConfig } from './create-provider.js';
import type { Signer } from '../../signing/signer.js';
import { encodeSearchContent } from '../../signing/search-content.js';
import { markReadable, readableText } from '../../tool-kinds/readable-search-results.js';
import { fitResults, MIN_SEARCH_CHARACTERS } from './fit-results.js';
import { SearchFailure, type SearchHit, type SearchOptions, type SearchProvider } from './search-provider.js';

/**
 * Longest query, in characters. The public API does not publish its limit; 400 is Brave's
 * documented one, applied to every provider so that a query's fate does not depend on which
 * engine the operator chose.
 */
export const MAX_QUERY_CHARACTERS = 400;

export interface WebSearchOptions {
  provider?: SearchProviderConfig | undefined;
  /** Results per search. */
  maxResults: number;
  /** Longest content per result, in characters (also bounded by the context headroom). */
  maxResultCharacters: number;
  /** Time limit of one search. */
  timeoutMs: number;
}

export interface SearchContext {
  request: MessageRequest;
  /** Characters the results may take in the context: URLs, titles, page ages and texts together. */
  resultCharacters: number;
  signal: AbortSignal;
}

export class WebSearchTool {
  private readonly provider: SearchProvider | undefined;

  constructor(
    private readonly options: WebSearchOptions,
    private readonly signer: Signer,
    provider?: SearchProvider,
  ) {
    this.provider = provider ?? createSearchProvider(options.provider);
  }

  async run(call: ServerToolUseBlock, context: SearchContext): Promise<ServerToolResultBlock> {
    const query = call.input.query;
    if (typeof query !== 'string' || query.trim() === '') return serverToolRefusal(call, 'invalid_tool_input');
    if (query.length > MAX_QUERY_CHARACTERS) return serverToolRefusal(call, 'query_too_long');
    if (!this.provider) return serverToolRefusal(call, 'unavailable');
    // The turn's context budget leaves this call too little room for even one result: a search
    // would spend a request on results the model cannot see. As web fetch does for a share too
    // small for a page, no request is made (usage counts none) and the answer is
    // max_uses_exceeded, the public code nearest to "this tool's room in the turn is used up".
    if (context.resultCharacters < MIN_SEARCH_CHARACTERS) return serverToolRefusal(call, 'max_uses_exceeded');
    const tool = (context.request.tools ?? []).find(isWebSearchTool);
    const filter = DomainFilter.fromLists(tool);
    // What each result may hold before the hits are known; fitResults cuts again once they are.
    const maxCharacters = Math.min(
      this.options.maxResultCharacters,
      Math.floor(context.resultCharacters / this.options.maxResults),
    );
    let hits;
    try {
      hits = await this.provider.search(query.trim(), {
        signal: AbortSignal.any([context.signal, AbortSignal.timeout(this.options.timeoutMs)]),
        maxResults: this.options.maxResults,
        maxCharacters,
        accepts: (url) => filter.permits(url),
        location: locationOf(tool?.user_location),
      });
    } catch (error) {
      // The client went away: the turn is over and there is no one to tell.
      if (context.signal.aborted) throw context.signal.reason ?? error;
      return serverToolError(call, error instanceof SearchFailure ? error.errorCode : 'unavailable');
    }
    const permitted = hits.filter((hit) => filter.permits(hit.url)).slice(0, this.options.maxResults);
    const kept = fitResults(permitted, context.resultCharacters, maxCharacters);
    // Hits were found but not one fits the share (their URLs and titles are long): saying "no
    // results" would be false, so the answer is the same as for a share too small to search.
    if (kept.length === 0 && permitted.length > 0) return serverToolError(call, 'max_uses_exceeded');
    return { type: 'web_search_tool_result', tool_use_id: call.id, content: kept.map((hit) => this.resultOf(hit)) };
  }

  /**
   * Results this tool made, fitted again to `characters` as `run` fits hits to their share
   * (ServerToolRunner.fit); when not one fits any more, the error of a share too small.
   */
  fit(result: ServerToolResultBlock, characters: number): ServerToolResultBlock {
    if (!Array.isArray(result.content)) return result;
    const hits = (result.content as SearchResult[]).map((item): SearchHit => ({
      url: item.url,
      title: item.title,
      pageAge: item.page_age,
      content: readableText(item) ?? '',
    }));
    const longest = Math.max(0, ...hits.map((hit) => hit.content.length));
    const kept = fitResults(hits, characters, longest);
    if (kept.length === 0) return errorResultFor(result, 'max_uses_exceeded');
    return { ...result, content: kept.map((hit) => this.resultOf(hit)) };
  }

  close(): Promise<void> {
    return this.provider?.close() ?? Promise.resolve();
  }

  /** A hit as a `web_search_result`, its text encoded and readable to this service (signing/search-content.ts). */
  private resultOf(hit: SearchHit): SearchResult {
    const result: SearchResult = {
      type: 'web_search_result',
      url: hit.url,
      title: hit.title,
      page_age: hit.pageAge,
      encrypted_content: encodeSearchContent(this.signer, hit.url, hit.content),
    };
    markReadable(result, hit.content);
    return result;
  }
}

/** The fields of `user_location` that are set; undefined when none is. */
function locationOf(location: UserLocation | null | undefined): SearchOptions['location'] {
  if (!location) return undefined;
  const { city, region, country, timezone } = location;
  const set = Object.entries({ city, region, country, timezone }).filter(([, value]) => typeof value === 'string');
  return set.length === 0 ? undefined : Object.fromEntries(set);
}

interface SearchResult {
  type: 'web_search_result';
  url: string;
  title: string;
  page_age: SearchHit['pageAge'];
  encrypted_content: string;
}
