/**
 * The web search server tool (`web_search_20260209`), run by the service over the configured
 * provider. The result block has the public API's shape:
 * `{type: 'web_search_tool_result', tool_use_id, content: [{type: 'web_search_result', url,
 * title, page_age, encrypted_content}]}`, where `encrypted_content` carries the text a model
 * reads (encrypted-content.ts). Failures are the public error block with `invalid_tool_input`
 * (no query), `query_too_long`, `too_many_requests` (the provider answered 429) or `unavailable`
 * (no provider configured, or it failed or timed out); `max_uses_exceeded` is the loop's.
 * `allowed_domains` / `blocked_domains` filter the results (tools/domain-filter.ts).
 */
import { SERVER_TOOL_TYPES, type MessageRequest, type ServerToolResultBlock, type ServerToolUseBlock, type WebSearchToolParam } from '@mms/protocol';
import { serverToolError } from '../../agent/server-tool-runner.js';
import { DomainFilter } from '../domain-filter.js';
import { createSearchProvider, type SearchProviderConfig } from './create-provider.js';
import { encodeSearchContent } from './encrypted-content.js';
import { SearchFailure, type SearchProvider } from './search-provider.js';

/**
 * Longest query, in characters. The public API does not publish its limit; 400 is Brave's
 * documented one, applied to every provider so that a query's fate does not depend on which
 * engine the operator chose.
 */
export const MAX_QUERY_CHARACTERS = 400;

const CHARACTERS_PER_TOKEN = 4;

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
  /** Input tokens of the prompt and the model's window, for the content budget. */
  inputTokens: number;
  contextWindow: number;
  signal: AbortSignal;
}

export class WebSearchTool {
  private readonly provider: SearchProvider | undefined;

  constructor(
    private readonly options: WebSearchOptions,
    provider?: SearchProvider,
  ) {
    this.provider = provider ?? createSearchProvider(options.provider);
  }

  async run(call: ServerToolUseBlock, context: SearchContext): Promise<ServerToolResultBlock> {
    const query = call.input.query;
    if (typeof query !== 'string' || query.trim() === '') return serverToolError(call, 'invalid_tool_input');
    if (query.length > MAX_QUERY_CHARACTERS) return serverToolError(call, 'query_too_long');
    if (!this.provider) return serverToolError(call, 'unavailable');
    const tool = (context.request.tools ?? []).find((candidate): candidate is WebSearchToolParam => candidate.type === SERVER_TOOL_TYPES.webSearch);
    const filter = DomainFilter.fromLists(tool);
    const maxCharacters = this.resultCharacters(tool, context);
    let hits;
    try {
      hits = await this.provider.search(query.trim(), {
        signal: AbortSignal.any([context.signal, AbortSignal.timeout(this.options.timeoutMs)]),
        maxResults: this.options.maxResults,
        maxCharacters,
        accepts: (url) => filter.permits(url),
      });
    } catch (error) {
      // The client went away: the turn is over and there is no one to tell.
      if (context.signal.aborted) throw context.signal.reason ?? error;
      return serverToolError(call, error instanceof SearchFailure ? error.errorCode : 'unavailable');
    }
    const results = hits
      .filter((hit) => filter.permits(hit.url))
      .slice(0, this.options.maxResults)
      .map((hit) => ({ type: 'web_search_result', url: hit.url, title: hit.title, page_age: hit.pageAge, encrypted_content: encodeSearchContent(hit.content.slice(0, maxCharacters)) }));
    return { type: 'web_search_tool_result', tool_use_id: call.id, content: results };
  }

  close(): Promise<void> {
    return this.provider?.close() ?? Promise.resolve();
  }

  /**
   * Content per result: the configured cap, or less when the window is tight: the input
   * headroom after the prompt, divided across the allowed searches and their results (as web
   * fetch divides it across fetches; spec, Limits).
   */
  private resultCharacters(tool: WebSearchToolParam | undefined, context: SearchContext): number {
    const headroom = Math.max(0, context.contextWindow - context.inputTokens - context.request.max_tokens);
    const perResult = (headroom * CHARACTERS_PER_TOKEN) / (tool?.max_uses ?? 1) / this.options.maxResults;
    return Math.max(0, Math.min(this.options.maxResultCharacters, Math.floor(perResult)));
  }
}
