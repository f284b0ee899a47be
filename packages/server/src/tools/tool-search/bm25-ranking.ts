/**
 * Tool search by words (tool_search_tool_bm25, issue 34): the tools ranked by BM25 against the
 * query, with MiniSearch, the index web search's folder provider ranks documents with. A tool's
 * name counts most; names are split where they join words (`get_weather`, `sendSlackMessage`),
 * so that the words a model writes find them.
 */
import MiniSearch from 'minisearch';
import type { SearchableTool } from './searchable-tools.js';

/** `sendSlackMessage`, `send_slack-message` and `send slack message` all read as the same three words. */
function words(text: string): string[] {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}

export function rankByWords(tools: readonly SearchableTool[], query: string, limit: number): string[] {
  const index = new MiniSearch<SearchableTool & { id: number }>({
    idField: 'id',
    fields: ['name', 'description', 'parameters'],
    storeFields: ['name'],
    tokenize: words,
  });
  index.addAll(tools.map((tool, id) => ({ ...tool, id })));
  return index
    .search(query, { boost: { name: 3 }, combineWith: 'OR', prefix: (term) => term.length >= 4 })
    .slice(0, limit)
    .map((result) => String(result.name));
}
