/**
 * Tool search as the service describes it (server-tool-kind.ts; issue 34): two tools, by a
 * regular expression and by BM25, over the request's deferred tools; tools/tool-search/ runs
 * both. A result reads to the model as the tools it found, which are offered to it from then on
 * (call-builder/tool-table.ts), in the same turn. Both answer in one result block, whose text
 * reads the same whichever tool made it.
 */
import { SERVER_TOOL_NAMES, SERVER_TOOL_VERSIONS, TOOL_SEARCH_LIMITS } from '@model-messages/protocol';
import { errorCodeText, isErrorContent, jsonCharacters, textOf } from './result-values.js';
import type { ServerToolKind } from './server-tool-kind.js';

interface SearchContent {
  type?: unknown;
  tool_references?: unknown;
  error_message?: unknown;
}

const shared = {
  resultType: 'tool_search_tool_result',
  resultText: toolSearchResultText,
  resultCharacters: jsonCharacters,
  // A result is a few names: one share is ample.
  headroom: 'single',
  // The public API's usage.server_tool_use has no tool search counter.
  usageCounter: undefined,
} as const;

export const toolSearchRegexKind = {
  name: SERVER_TOOL_NAMES.toolSearchRegex,
  types: SERVER_TOOL_VERSIONS.toolSearchRegex,
  offer: {
    description: `Find tools that are not loaded yet: a regular expression is matched against each tool's name, description and parameters, and up to ${TOOL_SEARCH_LIMITS.maxResults} matching tools become available to call.`,
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          description: `A regular expression of at most ${TOOL_SEARCH_LIMITS.maxPatternCharacters} characters, such as "weather" or "(?i)send.*message".`,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
  ...shared,
} satisfies ServerToolKind;

export const toolSearchBm25Kind = {
  name: SERVER_TOOL_NAMES.toolSearchBm25,
  types: SERVER_TOOL_VERSIONS.toolSearchBm25,
  offer: {
    description: `Find tools that are not loaded yet: the words given are ranked against each tool's name, description and parameters, and the ${TOOL_SEARCH_LIMITS.maxResults} best tools become available to call.`,
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string', description: 'Words that describe the tool needed.' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
  ...shared,
} satisfies ServerToolKind;

/** `content` of a tool_search_tool_result block: the tools found, or an error object. */
function toolSearchResultText(content: unknown): string {
  const result = content as SearchContent;
  if (isErrorContent(content)) {
    const message = textOf(result.error_message);
    return `Tool search failed: ${errorCodeText(content)}${message ? ` (${message})` : ''}.`;
  }
  const names = Array.isArray(result?.tool_references)
    ? (result.tool_references as Array<{ tool_name?: unknown }>).map((reference) => textOf(reference.tool_name))
    : [];
  if (names.length === 0) return 'Tool search found no matching tools.';
  return `Tool search found: ${names.join(', ')}. These tools are now available to call.`;
}
