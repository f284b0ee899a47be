/**
 * The web fetch tool as the service describes it (server-tool-kind.ts); tools/web-fetch/ runs it.
 * A fetched page reads to the model as its URL, title and text.
 */
import { SERVER_TOOL_NAMES, SERVER_TOOL_VERSIONS } from '@model-messages/protocol';
import { errorCodeText, isErrorContent, jsonCharacters, textOf } from './result-values.js';
import type { ServerToolKind } from './server-tool-kind.js';

interface FetchedPage {
  type?: unknown;
  url?: unknown;
  content?: { title?: unknown; source?: { data?: unknown } };
}

export const webFetchKind = {
  name: SERVER_TOOL_NAMES.webFetch,
  types: SERVER_TOOL_VERSIONS.webFetch,
  resultType: 'web_fetch_tool_result',
  offer: {
    description:
      'Fetch a web page or document by URL and return its text. Only URLs that already appear in the conversation can be fetched.',
    inputSchema: {
      type: 'object',
      properties: { url: { type: 'string', description: 'The URL to fetch.' } },
      required: ['url'],
      additionalProperties: false,
    },
  },
  resultText: (content) => {
    if (isErrorContent(content)) return `Web fetch failed: ${errorCodeText(content)}.`;
    const page = content as FetchedPage;
    const document = page.content ?? {};
    const lines = [`URL: ${textOf(page.url)}`];
    if (textOf(document.title)) lines.push(`Title: ${textOf(document.title)}`);
    return `${lines.join('\n')}\n\n${textOf(document.source?.data)}`;
  },
  // What the tool fits to its share: the page's text with its URL and title.
  resultCharacters: (content) => {
    const page = content as FetchedPage;
    if (page.type !== 'web_fetch_result') return jsonCharacters(content);
    return textOf(page.url).length + textOf(page.content?.title).length + textOf(page.content?.source?.data).length;
  },
  headroom: 'divided',
  usageCounter: 'web_fetch_requests',
} satisfies ServerToolKind;
