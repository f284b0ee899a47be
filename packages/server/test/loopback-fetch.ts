/**
 * The web fetch tool run directly, as a model's call runs it, on pages a test serves on loopback:
 * for the unit tests of what the tool makes of a page (its HTML, its encoding).
 */
import { after, before } from 'node:test';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseMessageRequest, type ServerToolResultBlock } from '@model-messages/protocol';
import { WebFetchTool } from '../src/tools/web-fetch/web-fetch-tool.js';

const FETCH_TOOL = { type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'], max_uses: 5 };

/**
 * For a describe block: a web fetch tool allowed onto loopback, and a page server answering with
 * `respond`, both closed after the block. `fetchBlock(path)` runs the tool on one of its pages as
 * a model's call would, with a user turn that names the URL.
 */
export function useLoopbackFetch(respond: RequestListener): {
  fetchBlock(path: string): Promise<ServerToolResultBlock>;
} {
  let pages: Server;
  let origin = '';
  const tool = new WebFetchTool({
    allowNetworks: ['127.0.0.1/32'],
    maxBytes: 50_000,
    timeoutMs: 5_000,
    maxRedirects: 0,
    conversionTimeoutMs: 10_000,
  });
  before(async () => {
    pages = createServer(respond);
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  });
  after(async () => {
    await tool.close();
    pages.closeAllConnections();
    pages.close();
  });
  return {
    fetchBlock(path) {
      const url = `${origin}${path}`;
      const request = parseMessageRequest({
        model: 'mid',
        max_tokens: 10,
        messages: [{ role: 'user', content: `read ${url}` }],
        tools: [FETCH_TOOL],
      });
      return tool.run(
        { type: 'server_tool_use', id: 'srvtoolu_loopback', name: 'web_fetch', input: { url } },
        { request, turnSoFar: [], resultCharacters: 40_000, signal: new AbortController().signal },
      );
    },
  };
}
