/**
 * The web search server tool, run by the service: the offline folder index (ranking, the saved
 * index reused on restart, changes reflected), SearXNG and Brave against fake servers on
 * loopback, domain filters for search and fetch, every public error code, the encrypted_content
 * round trip and how a model reads results, and the loop through the real service: search ->
 * fetch a URL from the results -> answer, streamed too.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseMessageRequest, type MessageRequest, type ServerToolResultBlock } from '@mms/protocol';
import { ConfigError, loadConfig, validateConfig } from '@mms/server';
import { postJson, readSse, scriptedModels, startService, type RunningService } from '@mms/testing';
import { toChatHistory } from '../packages/server/src/backends/llama-cpp/chat-history.js';
import { renderPrompt } from '../packages/server/src/backends/scripted/tokenizer.js';
import { DomainFilter } from '../packages/server/src/tools/domain-filter.js';
import { BraveSearchProvider } from '../packages/server/src/tools/web-search/brave-provider.js';
import { decodeSearchContent, encodeSearchContent } from '../packages/server/src/tools/web-search/encrypted-content.js';
import { readFolderDocument } from '../packages/server/src/tools/web-search/folder-document.js';
import { DEFAULT_INDEX_FILE_NAME, FolderSearchProvider } from '../packages/server/src/tools/web-search/folder-provider.js';
import { passageExcerpt } from '../packages/server/src/tools/web-search/passage-excerpt.js';
import { webSearchResultText } from '../packages/server/src/tools/web-search/result-text.js';
import { SearchFailure, type SearchOptions, type SearchProvider } from '../packages/server/src/tools/web-search/search-provider.js';
import { SearxngSearchProvider } from '../packages/server/src/tools/web-search/searxng-provider.js';
import { MAX_QUERY_CHARACTERS, WebSearchTool } from '../packages/server/src/tools/web-search/web-search-tool.js';

interface SearchResult {
  type: string;
  url: string;
  title: string;
  page_age: string | null;
  encrypted_content: string;
}

interface Block {
  type: string;
  id?: string;
  tool_use_id?: string;
  name?: string;
  input?: Record<string, unknown>;
  text?: string;
  content?: unknown;
}

interface Reply {
  content: Block[];
  stop_reason: string;
  usage: { server_tool_use: { web_search_requests: number; web_fetch_requests: number } | null };
}

const OTTERS_MD = `---
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

function never(): SearchOptions {
  return { signal: new AbortController().signal, maxResults: 5, maxCharacters: 2000, accepts: () => true };
}

function documentsFolder(): string {
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

/** Writes `text` and moves the mtime on, so that a change is seen even within one clock tick. */
function rewrite(path: string, text: string): void {
  writeFileSync(path, text);
  const later = new Date(Date.now() + 5_000);
  utimesSync(path, later, later);
}

describe('folder index', () => {
  test('ranks the document about the query first, with its title, URL, page age and the matching passage', async () => {
    const folder = documentsFolder();
    const provider = new FolderSearchProvider({ folder, urlBase: 'https://docs.example.com/kb/', watch: false });
    try {
      const hits = await provider.search('sea otters', never());
      assert.equal(hits[0]?.title, 'Sea otters');
      assert.equal(hits[0]?.url, 'https://docs.example.com/kb/otters.md');
      assert.equal(hits[0]?.pageAge, '2024-05-01');
      assert.ok(hits.some((hit) => hit.url === 'https://docs.example.com/kb/beavers.txt'), 'otter finds otters by prefix');
      assert.ok(!hits.some((hit) => hit.title.includes('draft')), 'dot files are not indexed');

      const salmon = await provider.search('salmon spawn', never());
      assert.equal(salmon.length, 1);
      assert.equal(salmon[0]?.url, 'https://rivers.example.org/world', 'an HTML canonical link is the URL');
      assert.equal(salmon[0]?.title, 'Rivers of the world');
      assert.equal(salmon[0]?.pageAge, '2023-02-03');
      assert.match(salmon[0]?.content ?? '', /Salmon swim upstream/);
      assert.doesNotMatch(salmon[0]?.content ?? '', /Home \| About/, 'HTML goes through page-to-text (article only)');

      // A long document: the passages that matched, not its opening, within the budget.
      const [stones] = await provider.search('stones shells', { ...never(), maxCharacters: 300 });
      assert.ok((stones?.content.length ?? 0) <= 300);
      assert.match(stones?.content ?? '', /stones as tools/);
      assert.equal(provider.documentCount, 3);
    } finally {
      await provider.close();
    }
  });

  test('the saved index is reused on restart: no document is read again unless it changed', async () => {
    const folder = documentsFolder();
    const first = new FolderSearchProvider({ folder, watch: false });
    const before = await first.search('beavers dams', never());
    assert.equal(first.documentsRead, 3);
    await first.close();
    assert.ok(existsSync(join(folder, DEFAULT_INDEX_FILE_NAME)), 'closing saves the index');

    const second = new FolderSearchProvider({ folder, watch: false });
    assert.deepEqual(await second.search('beavers dams', never()), before);
    assert.equal(second.documentsRead, 0, 'the restart read the index file, not the documents');
    assert.equal(before[0]?.url, pathToFileURL(join(folder, 'beavers.txt')).href, 'without urlBase a document has its file URL');
    await second.close();

    // Changed while the service was down: only that file is read at the next start.
    rewrite(join(folder, 'beavers.txt'), 'Beavers\n\nBeavers build lodges of mud and sticks.\n');
    const third = new FolderSearchProvider({ folder, watch: false });
    assert.equal((await third.search('lodges', never()))[0]?.title, 'Beavers');
    assert.equal(third.documentsRead, 1);
    await third.close();
  });

  test('an index file from another folder or a damaged one is rebuilt, not trusted', async () => {
    const folder = documentsFolder();
    const indexFile = join(mkdtempSync(join(tmpdir(), 'mms-search-index-')), 'index.json');
    const first = new FolderSearchProvider({ folder, indexFile, watch: false });
    await first.search('otters', never());
    await first.close();

    const other = documentsFolder();
    const second = new FolderSearchProvider({ folder: other, indexFile, watch: false });
    assert.equal((await second.search('otters', never()))[0]?.url, pathToFileURL(join(other, 'otters.md')).href);
    assert.equal(second.documentsRead, 3);
    await second.close();

    writeFileSync(indexFile, '{"format": "mms-folder-search-index", "version": 1, "folder"');
    const third = new FolderSearchProvider({ folder, indexFile, watch: false });
    assert.equal((await third.search('otters', never()))[0]?.title, 'Sea otters');
    assert.equal(third.documentsRead, 3);
    await third.close();
  });

  test('a changed, an added and a deleted file are reflected by the next query', async () => {
    const folder = documentsFolder();
    const provider = new FolderSearchProvider({ folder, watch: false });
    try {
      assert.deepEqual(await provider.search('walrus', never()), []);
      rewrite(join(folder, 'beavers.txt'), 'Beavers\n\nA walrus once visited the beaver pond.\n');
      assert.equal((await provider.search('walrus', never()))[0]?.title, 'Beavers', 'changed');

      writeFileSync(join(folder, 'geography', 'glaciers.md'), '# Glaciers\n\nGlaciers carve valleys.\n');
      assert.equal((await provider.search('glaciers valleys', never()))[0]?.title, 'Glaciers', 'added');

      rmSync(join(folder, 'otters.md'));
      const otters = await provider.search('sea otters', never());
      assert.ok(!otters.some((hit) => hit.title === 'Sea otters'), 'deleted');
      assert.deepEqual(provider.lastRefresh, { added: 0, changed: 0, removed: 1 });
    } finally {
      await provider.close();
    }
  });

  test('with the watcher on, a file added to a new subfolder is found', async () => {
    const folder = documentsFolder();
    const provider = new FolderSearchProvider({ folder });
    try {
      await provider.search('otters', never());
      mkdirSync(join(folder, 'new'));
      writeFileSync(join(folder, 'new', 'narwhals.md'), '# Narwhals\n\nNarwhals have one long tusk.\n');
      // The watcher's event arrives on its own schedule: wait for the result, within a generous bound.
      const deadline = Date.now() + 10_000;
      let found = false;
      while (!found && Date.now() < deadline) {
        found = (await provider.search('narwhals tusk', never())).some((hit) => hit.title === 'Narwhals');
        if (!found) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(found);
    } finally {
      await provider.close();
    }
  });

  test('the domain filter is applied inside the index, so a narrow allow-list still gets its results', async () => {
    const folder = documentsFolder();
    const provider = new FolderSearchProvider({ folder, urlBase: 'https://docs.example.com/', watch: false });
    try {
      const filter = DomainFilter.fromLists({ allowed_domains: ['rivers.example.org'] });
      const hits = await provider.search('sea', { ...never(), maxResults: 1, accepts: (url) => filter.permits(url) });
      assert.deepEqual(hits.map((hit) => hit.url), ['https://rivers.example.org/world']);
    } finally {
      await provider.close();
    }
  });

  test('a folder that does not exist is unavailable, and found once it appears', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'mms-search-missing-')), 'docs');
    const provider = new FolderSearchProvider({ folder, watch: false });
    try {
      await assert.rejects(provider.search('otters', never()), (error: unknown) => error instanceof SearchFailure && error.errorCode === 'unavailable');
      mkdirSync(folder);
      writeFileSync(join(folder, 'otters.md'), OTTERS_MD);
      assert.equal((await provider.search('otters', never()))[0]?.title, 'Sea otters');
    } finally {
      await provider.close();
    }
  });

  test('URL rule: front matter url, then urlBase + path, then the file URL', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'mms-search-url-'));
    mkdirSync(join(folder, 'a b'));
    writeFileSync(join(folder, 'a b', 'own.md'), '---\nurl: "https://own.example.com/page"\ntitle: Own\n---\nBody');
    writeFileSync(join(folder, 'a b', 'plain.md'), 'No front matter, no heading.');
    const own = await readFolderDocument({ folder, urlBase: 'https://base.example.com/docs' }, 'a b/own.md', 0);
    assert.equal(own.url, 'https://own.example.com/page');
    assert.equal(own.title, 'Own');
    const based = await readFolderDocument({ folder, urlBase: 'https://base.example.com/docs' }, 'a b/plain.md', Date.parse('2025-03-04T12:00:00Z'));
    assert.equal(based.url, 'https://base.example.com/docs/a%20b/plain.md');
    assert.equal(based.title, 'plain');
    assert.equal(based.pageAge, '2025-03-04');
    const bare = await readFolderDocument({ folder, urlBase: undefined }, 'a b/plain.md', 0);
    assert.equal(bare.url, pathToFileURL(join(folder, 'a b', 'plain.md')).href);
  });

  test('an excerpt keeps the paragraphs with the most query terms, in document order', () => {
    const text = ['Intro about nothing.', 'Otters eat crabs.', 'Filler '.repeat(50), 'Otters and crabs and urchins.'].join('\n\n');
    const excerpt = passageExcerpt(text, ['otters', 'crabs', 'urchins'], 80);
    assert.equal(excerpt, 'Otters eat crabs.\n\n[...]\n\nOtters and crabs and urchins.');
    assert.equal(passageExcerpt('short', ['x'], 80), 'short');
  });
});

interface Recorded {
  url: URL;
  headers: IncomingMessage['headers'];
}

/** A fake search API on loopback: answers `respond(url)` and records each request. */
async function fakeApi(respond: (url: URL) => { status: number; body: unknown }): Promise<{ server: Server; origin: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    requests.push({ url, headers: request.headers });
    const { status, body } = respond(url);
    if (status === 0) return; // never answers: for the time limit
    response.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

function stop(server: Server): void {
  server.closeAllConnections();
  server.close();
}

const toolRequest = (tool: Record<string, unknown> = {}): MessageRequest =>
  parseMessageRequest({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'q' }], tools: [{ type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'], ...tool }] });

async function runTool(provider: SearchProvider | undefined, input: Record<string, unknown>, tool: Record<string, unknown> = {}, timeoutMs = 5_000): Promise<ServerToolResultBlock> {
  const searchTool = new WebSearchTool({ maxResults: 3, maxResultCharacters: 500, timeoutMs }, provider);
  return searchTool.run({ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input }, { request: toolRequest(tool), resultCharacters: 400_000, signal: new AbortController().signal });
}

function errorCode(block: ServerToolResultBlock): string | undefined {
  return (block.content as { error_code?: string }).error_code;
}

describe('SearXNG provider', () => {
  test('GET /search?q=...&format=json, results mapped to hits', async () => {
    const api = await fakeApi(() => ({
      status: 200,
      body: {
        query: 'otters',
        results: [
          { url: 'https://a.example.com/otters', title: 'Otters &amp; friends', content: 'Otters <b>hold</b> hands.', publishedDate: '2024-01-02T00:00:00', engine: 'x' },
          { url: 'https://b.example.com/', title: '', content: null, publishedDate: null },
          { url: 'javascript:alert(1)', title: 'bad' },
        ],
      },
    }));
    try {
      const provider = new SearxngSearchProvider(`${api.origin}/searx`);
      const hits = await provider.search('sea otters', never());
      assert.equal(api.requests[0]?.url.pathname, '/searx/search');
      assert.equal(api.requests[0]?.url.searchParams.get('q'), 'sea otters');
      assert.equal(api.requests[0]?.url.searchParams.get('format'), 'json');
      assert.deepEqual(hits, [
        { url: 'https://a.example.com/otters', title: 'Otters & friends', pageAge: '2024-01-02T00:00:00', content: 'Otters hold hands.' },
        { url: 'https://b.example.com/', title: 'https://b.example.com/', pageAge: null, content: '' },
      ]);
    } finally {
      stop(api.server);
    }
  });

  test('429 is too_many_requests; 403 (JSON format off), 500 and a body that is not JSON are unavailable', async () => {
    let status = 429;
    const api = await fakeApi(() => ({ status, body: status === 200 ? 'not json' : { error: 'x' } }));
    try {
      const provider = new SearxngSearchProvider(api.origin);
      assert.equal(errorCode(await runTool(provider, { query: 'otters' })), 'too_many_requests');
      for (status of [403, 500, 200]) assert.equal(errorCode(await runTool(provider, { query: 'otters' })), 'unavailable', String(status));
    } finally {
      stop(api.server);
    }
  });
});

describe('Brave provider', () => {
  const braveBody = {
    type: 'search',
    web: {
      results: [
        { title: 'Sea <strong>otters</strong>', url: 'https://www.otters.example.com/sea', description: 'Sea <strong>otters</strong> hold hands.', extra_snippets: ['They use stones.'], page_age: '2024-06-01T08:00:00', age: 'June 1, 2024' },
        { title: 'Blocked', url: 'https://ads.example.net/otters', description: 'Buy otters.', age: '3 days ago' },
        { title: 'River otters', url: 'https://rivers.example.org/otters', description: 'River otters.' },
      ],
    },
  };

  test('GET /res/v1/web/search with the key header; page_age preferred, age as fallback, markup stripped', async () => {
    const api = await fakeApi(() => ({ status: 200, body: braveBody }));
    try {
      const provider = new BraveSearchProvider('brave-key-123', api.origin);
      const hits = await provider.search('sea otters', never());
      const request = api.requests[0]!;
      assert.equal(request.url.pathname, '/res/v1/web/search');
      assert.equal(request.url.searchParams.get('q'), 'sea otters');
      assert.equal(request.url.searchParams.get('count'), '20');
      assert.equal(request.headers['x-subscription-token'], 'brave-key-123');
      assert.deepEqual(hits[0], { url: 'https://www.otters.example.com/sea', title: 'Sea otters', pageAge: '2024-06-01T08:00:00', content: 'Sea otters hold hands.\nThey use stones.' });
      assert.equal(hits[1]?.pageAge, '3 days ago');
      assert.equal(hits[2]?.pageAge, null);
    } finally {
      stop(api.server);
    }
  });

  test('through the tool: result blocks in the public shape, filtered by the domain lists', async () => {
    const api = await fakeApi(() => ({ status: 200, body: braveBody }));
    try {
      const provider = new BraveSearchProvider('brave-key-123', api.origin);
      const block = await runTool(provider, { query: 'otters' }, { blocked_domains: ['EXAMPLE.net.'] });
      assert.equal(block.type, 'web_search_tool_result');
      assert.equal(block.tool_use_id, 'srvtoolu_1');
      const results = block.content as SearchResult[];
      assert.deepEqual(results.map((result) => result.url), ['https://www.otters.example.com/sea', 'https://rivers.example.org/otters']);
      assert.deepEqual(Object.keys(results[0]!).sort(), ['encrypted_content', 'page_age', 'title', 'type', 'url']);
      assert.equal(results[0]?.type, 'web_search_result');
      assert.equal(decodeSearchContent(results[0]!.encrypted_content), 'Sea otters hold hands.\nThey use stones.');

      const allowed = await runTool(provider, { query: 'otters' }, { allowed_domains: ['otters.example.com'] });
      assert.deepEqual((allowed.content as SearchResult[]).map((result) => result.url), ['https://www.otters.example.com/sea']);
    } finally {
      stop(api.server);
    }
  });

  test('429 is too_many_requests, 500 is unavailable, a query with no web section has no results', async () => {
    let status = 429;
    const api = await fakeApi(() => ({ status, body: status === 200 ? { type: 'search', query: { original: 'zzz' } } : { type: 'ErrorResponse' } }));
    try {
      const provider = new BraveSearchProvider('brave-key-123', api.origin);
      assert.equal(errorCode(await runTool(provider, { query: 'otters' })), 'too_many_requests');
      status = 500;
      assert.equal(errorCode(await runTool(provider, { query: 'otters' })), 'unavailable');
      status = 200;
      assert.deepEqual((await runTool(provider, { query: 'zzz' })).content, []);
    } finally {
      stop(api.server);
    }
  });

  test('a provider that does not answer within timeoutMs is unavailable; one that is down too', async () => {
    const api = await fakeApi(() => ({ status: 0, body: null }));
    try {
      assert.equal(errorCode(await runTool(new BraveSearchProvider('k', api.origin), { query: 'otters' }, {}, 200)), 'unavailable');
    } finally {
      stop(api.server);
    }
    // A port nothing listens on.
    assert.equal(errorCode(await runTool(new BraveSearchProvider('k', api.origin), { query: 'otters' })), 'unavailable');
  });
});

describe('tool input and error codes', () => {
  const folder = documentsFolder();
  const provider = new FolderSearchProvider({ folder, watch: false });
  after(() => provider.close());

  for (const [input, label] of [[{}, 'missing'], [{ query: '' }, 'empty'], [{ query: '   ' }, 'blank'], [{ query: 42 }, 'a number']] as const) {
    test(`a ${label} query is invalid_tool_input`, async () => {
      assert.equal(errorCode(await runTool(provider, input)), 'invalid_tool_input');
    });
  }

  test(`a query over ${MAX_QUERY_CHARACTERS} characters is query_too_long; one at the limit is searched`, async () => {
    assert.equal(errorCode(await runTool(provider, { query: 'o'.repeat(MAX_QUERY_CHARACTERS + 1) })), 'query_too_long');
    assert.ok(Array.isArray((await runTool(provider, { query: `otters ${'o'.repeat(MAX_QUERY_CHARACTERS - 7)}` })).content));
  });

  test('no provider configured is unavailable', async () => {
    assert.equal(errorCode(await runTool(undefined, { query: 'otters' })), 'unavailable');
  });

  test('the error block has the public shape', async () => {
    assert.deepEqual(await runTool(undefined, { query: 'otters' }), { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'web_search_tool_result_error', error_code: 'unavailable' } });
  });
});

describe('domain filter', () => {
  test('a host covers itself and its subdomains, in any case, with or without a trailing dot', () => {
    const filter = DomainFilter.fromLists({ allowed_domains: ['Example.COM.'] });
    for (const url of ['https://example.com/', 'https://docs.example.com/a', 'http://EXAMPLE.com.:8080/x', 'https://a.b.example.com']) assert.equal(filter.permits(url), true, url);
    for (const url of ['https://notexample.com/', 'https://example.com.evil.net/', 'https://example.org/', 'not a url']) assert.equal(filter.permits(url), false, url);
  });

  test('a path entry covers that path and below it, at a segment boundary', () => {
    const filter = DomainFilter.fromLists({ allowed_domains: ['example.com/blog'] });
    assert.equal(filter.permits('https://example.com/blog'), true);
    assert.equal(filter.permits('https://www.example.com/blog/post-1'), true);
    assert.equal(filter.permits('https://example.com/blogger'), false);
    assert.equal(filter.permits('https://example.com/'), false);
  });

  test('blocked domains refuse their subdomains; an empty allow-list allows nothing; no lists allow all', () => {
    const blocked = DomainFilter.fromLists({ blocked_domains: ['ads.example.net'] });
    assert.equal(blocked.permits('https://x.ads.example.net/'), false);
    assert.equal(blocked.permits('https://example.net/'), true);
    assert.equal(DomainFilter.fromLists({ allowed_domains: [] }).permits('https://example.com/'), false);
    assert.equal(DomainFilter.fromLists({ allowed_domains: null, blocked_domains: null }).permits('https://example.com/'), true);
    assert.equal(DomainFilter.fromLists({ allowed_domains: ['bücher.de'] }).permits('https://www.xn--bcher-kva.de/'), true);
  });
});

describe('encrypted_content and what a model reads', () => {
  test('encrypted_content round-trips any text and is recognisably ours', () => {
    const text = 'Otters — ラッコ 🦦\n"quoted" & <tagged>';
    const encoded = encodeSearchContent(text);
    assert.match(encoded, /^mms1:[A-Za-z0-9_-]+$/);
    assert.equal(decodeSearchContent(encoded), text);
    assert.equal(decodeSearchContent('EqkKCAEYAiIkNTY0ZTE'), undefined, "another service's content is not decoded");
    assert.equal(decodeSearchContent('mms1:not base64!'), undefined);
  });

  const results = [
    { type: 'web_search_result', url: 'https://a.example.com/otters', title: 'Sea otters', page_age: '2024-05-01', encrypted_content: encodeSearchContent('Sea otters hold hands while they sleep.') },
    { type: 'web_search_result', url: 'https://b.example.com/', title: 'Foreign', page_age: null, encrypted_content: 'EqkKCAEYAiIkNTY0ZTE' },
  ];

  test('the llama.cpp chat history shows results as readable text, never base64', () => {
    const request = parseMessageRequest({
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'Otters?' },
        { role: 'assistant', content: [{ type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'otters' } }, { type: 'web_search_tool_result', tool_use_id: 's1', content: results }] },
        { role: 'user', content: 'And?' },
      ],
    });
    const { history } = toChatHistory(request);
    const call = (history[1] as { response: Array<{ type: string; result?: unknown }> }).response[0];
    assert.equal(call?.type, 'functionCall');
    assert.equal(
      call?.result,
      'Web search results:\n\n[1] Sea otters\nURL: https://a.example.com/otters\nPage age: 2024-05-01\nSea otters hold hands while they sleep.\n\n[2] Foreign\nURL: https://b.example.com/\n(content not readable by this service)',
    );
    assert.equal(webSearchResultText({ type: 'web_search_tool_result_error', error_code: 'too_many_requests' }), 'Web search failed: too_many_requests.');
    assert.equal(webSearchResultText([]), 'Web search found no results.');
  });

  test("the scripted backend counts the text a model reads, not the wire's base64", () => {
    const request = parseMessageRequest({
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'Otters?' },
        { role: 'assistant', content: [{ type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'otters' } }, { type: 'web_search_tool_result', tool_use_id: 's1', content: results.slice(0, 1) }] },
      ],
    });
    const prompt = renderPrompt(request);
    assert.match(prompt, /Sea otters hold hands while they sleep\./);
    assert.doesNotMatch(prompt, /mms1:/);
  });
});

describe('web search through the service', () => {
  let pages: Server;
  let origin: string;
  let folder: string;
  let service: RunningService;
  let bare: RunningService;

  /** Serves the documents folder under /docs/, and a redirect to a host name for the domain filter. */
  function servePages(): Promise<Server> {
    const server = createServer((request, response) => {
      const path = request.url ?? '/';
      if (path === '/to-localhost') {
        response.writeHead(302, { location: `http://localhost:${(server.address() as AddressInfo).port}/docs/beavers.txt` }).end();
        return;
      }
      const file = path.startsWith('/docs/') ? join(folder, ...decodeURIComponent(path.slice('/docs/'.length)).split('/')) : '';
      if (!file || !existsSync(file)) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': file.endsWith('.html') ? 'text/html' : 'text/plain; charset=utf-8' }).end(readFileSync(file));
    });
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
  }

  function writeScript(): string {
    const path = join(mkdtempSync(join(tmpdir(), 'mms-search-script-')), 'script.json');
    const search = (query: unknown) => ({ type: 'server_tool_use', name: 'web_search', input: { query } });
    const fetchCall = (url: string) => ({ type: 'server_tool_use', name: 'web_fetch', input: { url } });
    const script = [
      { when: '^research otters$', steps: [[search('sea otters')], [{ type: 'text', text: 'Reading the best result.' }, fetchCall(`${origin}/docs/otters.md`)], [{ type: 'text', text: 'Sea otters hold hands [1].' }]] },
      { when: '^fetch the earlier result$', steps: [[fetchCall(`${origin}/docs/otters.md`)], [{ type: 'text', text: 'Done.' }]] },
      { when: '^fetch unseen$', steps: [[fetchCall(`${origin}/docs/beavers.txt`)], [{ type: 'text', text: 'Done.' }]] },
      { when: '^search twice$', steps: [[search('otters'), search('beavers')], [{ type: 'text', text: 'Done.' }]] },
      { when: '^search empty$', steps: [[search('')], [{ type: 'text', text: 'Done.' }]] },
      { when: '^search long$', steps: [[search('x'.repeat(MAX_QUERY_CHARACTERS + 1))], [{ type: 'text', text: 'Done.' }]] },
      { when: '^search rivers$', steps: [[search('rivers otters beavers')], [{ type: 'text', text: 'Done.' }]] },
      { when: '^fetch via redirect ', steps: [[fetchCall(`${origin}/to-localhost`)], [{ type: 'text', text: 'Done.' }]] },
    ];
    writeFileSync(path, JSON.stringify(script));
    return path;
  }

  before(async () => {
    folder = documentsFolder();
    pages = await servePages();
    origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    const script = writeScript();
    const webFetch = { allowNetworks: ['127.0.0.0/8', '::1/128'], timeoutMs: 2_000 };
    const webSearch = { provider: { type: 'folder' as const, folder, urlBase: `${origin}/docs/`, watch: false }, maxResults: 3 };
    service = await startService({ models: scriptedModels({ script }), serverTools: { webFetch, webSearch } });
    bare = await startService({ models: scriptedModels({ script }), serverTools: { webFetch } });
  });

  after(async () => {
    await service.close();
    await bare.close();
    stop(pages);
  });

  const SEARCH_TOOL = { type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'], max_uses: 5 };
  const FETCH_TOOL = { type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'], max_uses: 5, max_content_tokens: 2000 };

  async function ask(target: RunningService, messages: unknown[], tools: unknown[] = [SEARCH_TOOL, FETCH_TOOL]): Promise<Reply> {
    const response = await postJson(target, '/v1/messages', { model: 'large', max_tokens: 300, messages, tools });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Reply;
  }

  function resultsOf(reply: Reply, type = 'web_search_tool_result'): unknown[] {
    return reply.content.filter((block) => block.type === type).map((block) => block.content);
  }

  test('the model searches, fetches a URL from the results, and answers; both requests are counted', async () => {
    const reply = await ask(service, [{ role: 'user', content: 'research otters' }]);
    assert.deepEqual(reply.content.map((block) => block.type), ['server_tool_use', 'web_search_tool_result', 'text', 'server_tool_use', 'web_fetch_tool_result', 'text']);
    const [search, , , fetchUse] = reply.content;
    assert.equal(reply.content[1]?.tool_use_id, search?.id);
    const results = resultsOf(reply)[0] as SearchResult[];
    assert.equal(results[0]?.url, `${origin}/docs/otters.md`);
    assert.equal(results[0]?.title, 'Sea otters');
    assert.equal(results[0]?.page_age, '2024-05-01');
    assert.match(decodeSearchContent(results[0]!.encrypted_content) ?? '', /hold hands while they sleep/);
    // The user never wrote the URL: the search result made it fetchable.
    assert.equal(reply.content[4]?.tool_use_id, fetchUse?.id);
    const fetched = resultsOf(reply, 'web_fetch_tool_result')[0] as { type: string; url: string; content: { source: { data: string } } };
    assert.equal(fetched.type, 'web_fetch_result');
    assert.match(fetched.content.source.data, /hold hands while they sleep/);
    assert.equal(reply.content.at(-1)?.text, 'Sea otters hold hands [1].');
    assert.equal(reply.stop_reason, 'end_turn');
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 1 });
  });

  test("a later request's search results, sent back, still make their URLs fetchable", async () => {
    const first = await ask(service, [{ role: 'user', content: 'research otters' }]);
    const searchTurn = first.content.slice(0, 2);
    const reply = await ask(service, [
      { role: 'user', content: 'research otters' },
      { role: 'assistant', content: searchTurn },
      { role: 'user', content: 'fetch the earlier result' },
    ]);
    assert.equal((resultsOf(reply, 'web_fetch_tool_result')[0] as { type: string }).type, 'web_fetch_result');
    // Without those results in the conversation, the same URL is not fetchable.
    const unseen = await ask(service, [{ role: 'user', content: 'fetch unseen' }]);
    assert.deepEqual(resultsOf(unseen, 'web_fetch_tool_result')[0], { type: 'web_fetch_tool_result_error', error_code: 'url_not_in_prior_context' });
  });

  test('the search blocks stream as SSE events, with the request counted in message_delta', async () => {
    const response = await postJson(service, '/v1/messages', { model: 'large', max_tokens: 300, stream: true, messages: [{ role: 'user', content: 'research otters' }], tools: [SEARCH_TOOL, FETCH_TOOL] });
    assert.equal(response.status, 200);
    const events = await readSse(response);
    const starts = events.filter((event) => event.event === 'content_block_start').map((event) => event.data.content_block as Block);
    assert.deepEqual(starts.map((block) => block.type), ['server_tool_use', 'web_search_tool_result', 'text', 'server_tool_use', 'web_fetch_tool_result', 'text']);
    const searchResult = starts[1]!;
    assert.equal(searchResult.tool_use_id, starts[0]?.id);
    assert.equal((searchResult.content as SearchResult[])[0]?.url, `${origin}/docs/otters.md`);
    // The server_tool_use block's input streams as JSON deltas, like a client tool's.
    const searchIndex = events.find((event) => event.event === 'content_block_start')?.data.index;
    const inputJson = events
      .filter((event) => event.event === 'content_block_delta' && event.data.index === searchIndex)
      .map((event) => (event.data.delta as { partial_json?: string }).partial_json ?? '')
      .join('');
    assert.deepEqual(JSON.parse(inputJson), { query: 'sea otters' });
    const delta = events.find((event) => event.event === 'message_delta')?.data as { usage: Reply['usage'] } | undefined;
    assert.deepEqual(delta?.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 1 });
  });

  test('error codes through the loop: invalid_tool_input, query_too_long, max_uses_exceeded, unavailable; none is counted', async () => {
    const empty = await ask(service, [{ role: 'user', content: 'search empty' }]);
    assert.deepEqual(resultsOf(empty)[0], { type: 'web_search_tool_result_error', error_code: 'invalid_tool_input' });
    assert.equal(empty.content.at(-1)?.text, 'Done.');
    assert.deepEqual(empty.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 0 });

    const long = await ask(service, [{ role: 'user', content: 'search long' }]);
    assert.deepEqual(resultsOf(long)[0], { type: 'web_search_tool_result_error', error_code: 'query_too_long' });

    const twice = await ask(service, [{ role: 'user', content: 'search twice' }], [{ ...SEARCH_TOOL, max_uses: 1 }]);
    const [first, second] = resultsOf(twice);
    assert.ok(Array.isArray(first));
    assert.deepEqual(second, { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' });
    assert.deepEqual(twice.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 0 });

    const unconfigured = await ask(bare, [{ role: 'user', content: 'research otters' }], [SEARCH_TOOL]);
    assert.deepEqual(resultsOf(unconfigured)[0], { type: 'web_search_tool_result_error', error_code: 'unavailable' });
  });

  test('allowed_domains and blocked_domains filter search results', async () => {
    const all = await ask(service, [{ role: 'user', content: 'search rivers' }], [SEARCH_TOOL]);
    assert.deepEqual(new Set((resultsOf(all)[0] as SearchResult[]).map((result) => new URL(result.url).hostname)), new Set(['127.0.0.1', 'rivers.example.org']));

    const allowed = await ask(service, [{ role: 'user', content: 'search rivers' }], [{ ...SEARCH_TOOL, allowed_domains: ['rivers.example.org'] }]);
    assert.deepEqual((resultsOf(allowed)[0] as SearchResult[]).map((result) => result.url), ['https://rivers.example.org/world']);

    const blocked = await ask(service, [{ role: 'user', content: 'search rivers' }], [{ ...SEARCH_TOOL, blocked_domains: ['example.org'] }]);
    const urls = (resultsOf(blocked)[0] as SearchResult[]).map((result) => result.url);
    assert.ok(urls.length > 0 && urls.every((url) => url.startsWith(`${origin}/docs/`)), urls.join());
  });

  test('web_fetch refuses a blocked or not-allowed domain, and a redirect into one, with url_not_allowed', async () => {
    const history = (await ask(service, [{ role: 'user', content: 'research otters' }], [SEARCH_TOOL, FETCH_TOOL])).content.slice(0, 2);
    const messages = [{ role: 'user', content: 'research otters' }, { role: 'assistant', content: history }, { role: 'user', content: 'fetch the earlier result' }];
    const blocked = await ask(service, messages, [SEARCH_TOOL, { ...FETCH_TOOL, blocked_domains: ['127.0.0.1'] }]);
    assert.deepEqual(resultsOf(blocked, 'web_fetch_tool_result')[0], { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
    const notAllowed = await ask(service, messages, [SEARCH_TOOL, { ...FETCH_TOOL, allowed_domains: ['example.com'] }]);
    assert.deepEqual(resultsOf(notAllowed, 'web_fetch_tool_result')[0], { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
    const allowed = await ask(service, messages, [SEARCH_TOOL, { ...FETCH_TOOL, allowed_domains: ['127.0.0.1'] }]);
    assert.equal((resultsOf(allowed, 'web_fetch_tool_result')[0] as { type: string }).type, 'web_fetch_result');

    const redirect = [{ role: 'user', content: `fetch via redirect ${origin}/to-localhost` }];
    const followed = await ask(service, redirect, [FETCH_TOOL]);
    assert.equal((resultsOf(followed, 'web_fetch_tool_result')[0] as { type: string }).type, 'web_fetch_result', 'the redirect itself works');
    const refused = await ask(service, redirect, [{ ...FETCH_TOOL, blocked_domains: ['localhost'] }]);
    assert.deepEqual(resultsOf(refused, 'web_fetch_tool_result')[0], { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
  });

  test('both lists on one tool, or an entry with a scheme, is a 400 that says so', async () => {
    for (const tool of [{ ...SEARCH_TOOL, allowed_domains: ['a.com'], blocked_domains: ['b.com'] }, { ...FETCH_TOOL, allowed_domains: [], blocked_domains: ['b.com'] }]) {
      const response = await postJson(service, '/v1/messages', { model: 'large', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], tools: [tool] });
      assert.equal(response.status, 400);
      const body = (await response.json()) as { error: { type: string; message: string } };
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /^tools\.0: allowed_domains and blocked_domains cannot be used together/);
    }
    const scheme = await postJson(service, '/v1/messages', { model: 'large', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], tools: [{ ...SEARCH_TOOL, allowed_domains: ['example.com', 'https://example.org'] }] });
    assert.equal(scheme.status, 400);
    assert.match(((await scheme.json()) as { error: { message: string } }).error.message, /^tools\.0\.allowed_domains\.1: "https:\/\/example\.org" is not a domain/);
    const nulls = await postJson(service, '/v1/messages', { model: 'large', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], tools: [{ ...SEARCH_TOOL, allowed_domains: null, blocked_domains: ['b.com'] }] });
    assert.equal(nulls.status, 200, 'null is unset, as the official client types it');
  });
});

describe('config', () => {
  const model = { id: 'm', tier: 'mid', generation: 'newer', contextWindow: 1000, maxOutputTokens: 100, backend: { type: 'scripted' } };

  test("a folder provider's paths resolve against the config file's folder", () => {
    const folder = mkdtempSync(join(tmpdir(), 'mms-search-config-'));
    const path = join(folder, 'mms.json');
    writeFileSync(path, JSON.stringify({ models: [model], serverTools: { webSearch: { provider: { type: 'folder', folder: 'docs', indexFile: 'state/index.json' } } } }));
    const { config } = loadConfig(path);
    assert.deepEqual(config.serverTools.webSearch, {
      provider: { type: 'folder', folder: join(folder, 'docs'), indexFile: join(folder, 'state', 'index.json'), watch: true },
      maxResults: 5,
      maxResultCharacters: 2000,
      timeoutMs: 10_000,
    });
  });

  test('defaults: no provider; Brave gets its public base URL; errors name the field', () => {
    assert.equal(validateConfig({ models: [model] }, 't.json').serverTools.webSearch.provider, undefined);
    const brave = validateConfig({ models: [model], serverTools: { webSearch: { provider: { type: 'brave', apiKey: 'k' } } } }, 't.json').serverTools.webSearch.provider;
    assert.deepEqual(brave, { type: 'brave', apiKey: 'k', baseURL: 'https://api.search.brave.com' });
    const refused = (input: unknown) => assert.throws(() => validateConfig({ models: [model], serverTools: { webSearch: input } }, 't.json'), ConfigError);
    refused({ provider: { type: 'brave' } });
    refused({ provider: { type: 'searxng', baseURL: 'ftp://x' } });
    refused({ provider: { type: 'folder' } });
    refused({ maxResults: 21 });
    assert.throws(() => validateConfig({ models: [model], serverTools: { webSearch: { provider: { type: 'brave' } } } }, 't.json'), /serverTools\.webSearch\.provider\.apiKey/);
  });
});
