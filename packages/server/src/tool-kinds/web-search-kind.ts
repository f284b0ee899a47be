/**
 * A `web_search_tool_result` as a model reads it: numbered results with title, URL, page age
 * and the decoded content, rather than the wire block with its base64 `encrypted_content`. Both
 * the embedded engine's chat history and the scripted backend's prompt rendering use it, so a
 * prompt's token count is the count of what the model really sees.
 */
import { readableText } from './encrypted-content.js';

interface ResultLike {
  type?: unknown;
  url?: unknown;
  title?: unknown;
  page_age?: unknown;
  error_code?: unknown;
}

/** `content` of a web_search_tool_result block: a list of results or an error object. */
export function webSearchResultText(content: unknown): string {
  if (!Array.isArray(content)) {
    const code = (content as ResultLike | null)?.error_code;
    return `Web search failed: ${typeof code === 'string' ? code : 'unknown error'}.`;
  }
  const results = (content as ResultLike[]).filter((result) => result?.type === 'web_search_result');
  if (results.length === 0) return 'Web search found no results.';
  const entries = results.map((result, index) => {
    const lines = [`[${index + 1}] ${text(result.title) || text(result.url)}`, `URL: ${text(result.url)}`];
    if (text(result.page_age)) lines.push(`Page age: ${text(result.page_age)}`);
    const body = readableText(result);
    // Content that another service encoded, or that does not verify, is not read; the title and URL still are.
    lines.push(body === undefined ? '(content not readable by this service)' : body);
    return lines.join('\n');
  });
  return `Web search results:\n\n${entries.join('\n\n')}`;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
