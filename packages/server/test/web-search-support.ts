/**
 * Shared set-up of the web search unit tests: search options that never time out, and the
 * web_search tool run directly on a provider, as the service runs it. The documents folder they
 * index is the testing kit's (search-documents.ts).
 */
import type { Server } from 'node:http';
import { parseMessageRequest, type MessageRequest, type ServerToolResultBlock } from '@model-messages/protocol';
import type { SearchOptions, SearchProvider } from '../src/tools/web-search/search-provider.js';
import { Signer } from '../src/signing/signer.js';
import { WebSearchTool } from '../src/tools/web-search/web-search-tool.js';

/** The key `runTool`'s search tool signs its results' content with. */
export const TOOL_SIGNER = new Signer(Buffer.alloc(32, 9));

/** Search options with no time limit that accept every URL. */
export function never(): SearchOptions {
  return { signal: new AbortController().signal, maxResults: 5, maxCharacters: 2000, accepts: () => true };
}

/** Stops a loopback server, open connections included. */
export function stop(server: Server): void {
  server.closeAllConnections();
  server.close();
}

const toolRequest = (tool: Record<string, unknown> = {}): MessageRequest =>
  parseMessageRequest({
    model: 'm',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'q' }],
    tools: [{ type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'], ...tool }],
  });

/**
 * Runs the web_search tool on `provider` for one call, with the tool definition's extra fields
 * `tool`, and `share` characters of the turn's context budget for its results. Its time limit is
 * generous: the first search indexes the documents folder, slow on a loaded machine.
 */
export async function runTool(
  provider: SearchProvider | undefined,
  input: Record<string, unknown>,
  tool: Record<string, unknown> = {},
  timeoutMs = 60_000,
  share = 400_000,
): Promise<ServerToolResultBlock> {
  const searchTool = new WebSearchTool({ maxResults: 3, maxResultCharacters: 500, timeoutMs }, TOOL_SIGNER, provider);
  return searchTool.run(
    { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input },
    { request: toolRequest(tool), resultCharacters: share, signal: new AbortController().signal },
  );
}

export function errorCode(block: ServerToolResultBlock): string | undefined {
  return (block.content as { error_code?: string }).error_code;
}
