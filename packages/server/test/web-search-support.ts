/**
 * Shared set-up of the web search tests: a small documents folder (Markdown with front matter,
 * plain text, HTML with a canonical link) for the folder index, search options that never time
 * out, and the web_search tool run directly on a provider, as the service runs it.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMessageRequest, type MessageRequest, type ServerToolResultBlock } from '@mms/protocol';
import type { SearchOptions, SearchProvider } from '../src/tools/web-search/search-provider.js';
import { Signer } from '../src/signing/signer.js';
import { WebSearchTool } from '../src/tools/web-search/web-search-tool.js';

/** The key `runTool`'s search tool signs its results' content with. */
export const TOOL_SIGNER = new Signer(Buffer.alloc(32, 9));

export interface SearchResult {
  type: string;
  url: string;
  title: string;
  page_age: string | null;
  encrypted_content: string;
}

export const OTTERS_MD = `---
title: Sea otters
date: 2024-05-01
---
# Sea otters

Sea otters hold hands while they sleep so that they do not drift apart.

${'Kelp forests shelter many animals along the coast. '.repeat(30)}

They use stones as tools to open shells.
`;

const BEAVERS_TXT = 'Beavers\n\nBeavers build dams across rivers. An otter sometimes visits the pond.\n';

const RIVERS_HTML = `<html><head><title>Rivers of the world</title><link rel="canonical" href="https://rivers.example.org/world">
<meta property="article:published_time" content="2023-02-03T10:00:00Z"></head>
<body><nav>Home | About</nav><article><h1>Rivers</h1><p>Rivers flow to the sea. Salmon swim upstream to spawn in rivers every autumn.</p>
<p>Great rivers carry silt to their deltas.</p></article></body></html>`;

/** Search options with no time limit that accept every URL. */
export function never(): SearchOptions {
  return { signal: new AbortController().signal, maxResults: 5, maxCharacters: 2000, accepts: () => true };
}

/** A fresh folder with three indexable documents (one in a subfolder) and two files the index skips. */
export function documentsFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'mms-search-docs-'));
  writeFileSync(join(folder, 'otters.md'), OTTERS_MD);
  writeFileSync(join(folder, 'beavers.txt'), BEAVERS_TXT);
  mkdirSync(join(folder, 'geography'));
  writeFileSync(join(folder, 'geography', 'rivers.html'), RIVERS_HTML);
  // Not indexed: other extensions, and dot files.
  writeFileSync(join(folder, 'data.json'), '{"otters": true}');
  writeFileSync(join(folder, '.draft.md'), '# Otters draft');
  return folder;
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
 * `tool`, and `share` characters of the turn's context budget for its results.
 */
export async function runTool(
  provider: SearchProvider | undefined,
  input: Record<string, unknown>,
  tool: Record<string, unknown> = {},
  timeoutMs = 5_000,
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
