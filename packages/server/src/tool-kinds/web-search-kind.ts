/**
 * The web search tool as the service describes it (server-tool-kind.ts); tools/web-search/ runs
 * it. A result reads to the model as numbered results with title, URL, page age and the decoded
 * content, rather than the wire block with its base64 `encrypted_content`: every engine is shown
 * this text, so a prompt's token count is the count of what the model really sees.
 */
import { SERVER_TOOL_NAMES, SERVER_TOOL_VERSIONS } from '@model-messages/protocol';
import { readableText } from './readable-search-results.js';
import { errorCodeText, jsonCharacters, textOf } from './result-values.js';
import type { ServerToolKind } from './server-tool-kind.js';

interface ResultLike {
  type?: unknown;
  url?: unknown;
  title?: unknown;
  page_age?: unknown;
}

export const webSearchKind = {
  name: SERVER_TOOL_NAMES.webSearch,
  types: SERVER_TOOL_VERSIONS.webSearch,
  resultType: 'web_search_tool_result',
  offer: {
    description: 'Search the web. Returns the title, URL and an excerpt of each result.',
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What to search for.' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
  resultText: webSearchResultText,
  resultCharacters: (content) =>
    Array.isArray(content)
      ? content.reduce((sum: number, result: object) => sum + searchResultCharacters(result), 0)
      : jsonCharacters(content),
  headroom: 'divided',
  usageCounter: 'web_search_requests',
} satisfies ServerToolKind;

/** `content` of a web_search_tool_result block: a list of results or an error object. */
export function webSearchResultText(content: unknown): string {
  if (!Array.isArray(content)) return `Web search failed: ${errorCodeText(content)}.`;
  const results = (content as ResultLike[]).filter((result) => result?.type === 'web_search_result');
  if (results.length === 0) return 'Web search found no results.';
  const entries = results.map((result, index) => {
    const lines = [`[${index + 1}] ${textOf(result.title) || textOf(result.url)}`, `URL: ${textOf(result.url)}`];
    if (textOf(result.page_age)) lines.push(`Page age: ${textOf(result.page_age)}`);
    const body = readableText(result);
    // Content that another service encoded, or that does not verify, is not read; the title and URL still are.
    lines.push(body === undefined ? '(content not readable by this service)' : body);
    return lines.join('\n');
  });
  return `Web search results:\n\n${entries.join('\n\n')}`;
}

/** One result as the search tool fits results to a share: its URL, title and page age with its text. */
function searchResultCharacters(result: ResultLike): number {
  const text = readableText(result) ?? '';
  return textOf(result.url).length + textOf(result.title).length + textOf(result.page_age).length + text.length;
}
