/**
 * A server tool's result block as the model reads it: readable text, the same for every engine.
 * The wire block is for the client (search results carry their text encoded in
 * `encrypted_content`, a fetched page sits in a document object); the model is shown the search
 * results numbered with their decoded text, the page's URL, title and text, and code's output.
 */
import type { ContentBlockParam } from '@model-messages/protocol';
import { webSearchResultText } from '../../tools/web-search/result-text.js';

export type ServerResultBlock = Extract<
  ContentBlockParam,
  { type: 'web_search_tool_result' | 'web_fetch_tool_result' | 'code_execution_tool_result' }
>;

export const SERVER_RESULT_TYPES: ReadonlySet<string> = new Set([
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
]);

export function isServerResult(block: ContentBlockParam): block is ServerResultBlock {
  return SERVER_RESULT_TYPES.has(block.type);
}

/** An error result: `{type: "<block type>_error", error_code}`. */
export function isErrorResult(block: ServerResultBlock): boolean {
  const content = block.content;
  return !Array.isArray(content) && typeof content.type === 'string' && content.type.endsWith('_error');
}

export function serverResultText(block: ServerResultBlock): string {
  if (block.type === 'web_search_tool_result') return webSearchResultText(block.content);
  const content = block.content as Record<string, unknown>;
  if (isErrorResult(block)) {
    const tool = block.type === 'web_fetch_tool_result' ? 'Web fetch' : 'Code execution';
    return `${tool} failed: ${text(content.error_code) || 'unknown error'}.`;
  }
  if (block.type === 'web_fetch_tool_result') return fetchedPageText(content);
  return codeOutputText(content);
}

function fetchedPageText(content: Record<string, unknown>): string {
  const document = (content.content ?? {}) as { title?: unknown; source?: { data?: unknown } };
  const lines = [`URL: ${text(content.url)}`];
  if (text(document.title)) lines.push(`Title: ${text(document.title)}`);
  return `${lines.join('\n')}\n\n${text(document.source?.data)}`;
}

function codeOutputText(content: Record<string, unknown>): string {
  const code = typeof content.return_code === 'number' ? content.return_code : 'unknown';
  return `Return code: ${code}\nstdout:\n${text(content.stdout)}\nstderr:\n${text(content.stderr)}`;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
