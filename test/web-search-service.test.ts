/**
 * Web search through the real service: search -> fetch a URL from the results -> answer, streamed
 * too; results sent back later, error codes through the loop, and domain filters for search and fetch.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  documentsFolder,
  postJson,
  readSse,
  scriptedModels,
  startService,
  type RunningService,
  type WebSearchResult,
} from '@model-messages/testing';
import { decodeSearchContent } from '../packages/server/src/signing/search-content.js';
import { MAX_QUERY_CHARACTERS } from '../packages/server/src/tools/web-search/web-search-tool.js';

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
        response
          .writeHead(302, { location: `http://localhost:${(server.address() as AddressInfo).port}/docs/beavers.txt` })
          .end();
        return;
      }
      const file = path.startsWith('/docs/')
        ? join(folder, ...decodeURIComponent(path.slice('/docs/'.length)).split('/'))
        : '';
      if (!file || !existsSync(file)) {
        response.writeHead(404).end();
        return;
      }
      response
        .writeHead(200, { 'content-type': file.endsWith('.html') ? 'text/html' : 'text/plain; charset=utf-8' })
        .end(readFileSync(file));
    });
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
  }

  function writeScript(): string {
    const path = join(mkdtempSync(join(tmpdir(), 'mms-search-script-')), 'script.json');
    const search = (query: unknown) => ({ type: 'server_tool_use', name: 'web_search', input: { query } });
    const fetchCall = (url: string) => ({ type: 'server_tool_use', name: 'web_fetch', input: { url } });
    const script = [
      {
        when: '^research otters$',
        steps: [
          [search('sea otters')],
          [{ type: 'text', text: 'Reading the best result.' }, fetchCall(`${origin}/docs/otters.md`)],
          [{ type: 'text', text: 'Sea otters hold hands [1].' }],
        ],
      },
      {
        when: '^fetch the earlier result$',
        steps: [[fetchCall(`${origin}/docs/otters.md`)], [{ type: 'text', text: 'Done.' }]],
      },
      { when: '^fetch unseen$', steps: [[fetchCall(`${origin}/docs/beavers.txt`)], [{ type: 'text', text: 'Done.' }]] },
      { when: '^search twice$', steps: [[search('otters'), search('beavers')], [{ type: 'text', text: 'Done.' }]] },
      { when: '^search empty$', steps: [[search('')], [{ type: 'text', text: 'Done.' }]] },
      {
        when: '^search long$',
        steps: [[search('x'.repeat(MAX_QUERY_CHARACTERS + 1))], [{ type: 'text', text: 'Done.' }]],
      },
      { when: '^search rivers$', steps: [[search('rivers otters beavers')], [{ type: 'text', text: 'Done.' }]] },
      {
        when: '^fetch via redirect ',
        steps: [[fetchCall(`${origin}/to-localhost`)], [{ type: 'text', text: 'Done.' }]],
      },
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
    const webSearch = {
      provider: { type: 'folder' as const, folder, urlBase: `${origin}/docs/`, watch: false },
      maxResults: 3,
    };
    service = await startService({ models: scriptedModels({ script }), serverTools: { webFetch, webSearch } });
    bare = await startService({ models: scriptedModels({ script }), serverTools: { webFetch } });
  });

  after(async () => {
    await service.close();
    await bare.close();
    pages.closeAllConnections();
    pages.close();
  });

  const SEARCH_TOOL = { type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'], max_uses: 5 };
  const FETCH_TOOL = {
    type: 'web_fetch_20260209',
    name: 'web_fetch',
    allowed_callers: ['direct'],
    max_uses: 5,
    max_content_tokens: 2000,
  };

  async function ask(
    target: RunningService,
    messages: unknown[],
    tools: unknown[] = [SEARCH_TOOL, FETCH_TOOL],
  ): Promise<Reply> {
    const response = await postJson(target, '/v1/messages', { model: 'large', max_tokens: 300, messages, tools });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Reply;
  }

  function resultsOf(reply: Reply, type = 'web_search_tool_result'): unknown[] {
    return reply.content.filter((block) => block.type === type).map((block) => block.content);
  }

  test('the model searches, fetches a URL from the results, and answers; both requests are counted', async () => {
    const reply = await ask(service, [{ role: 'user', content: 'research otters' }]);
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'web_search_tool_result', 'text', 'server_tool_use', 'web_fetch_tool_result', 'text'],
    );
    const [search, , , fetchUse] = reply.content;
    assert.equal(reply.content[1]?.tool_use_id, search?.id);
    const results = resultsOf(reply)[0] as WebSearchResult[];
    assert.equal(results[0]?.url, `${origin}/docs/otters.md`);
    assert.equal(results[0]?.title, 'Sea otters');
    assert.equal(results[0]?.page_age, '2024-05-01');
    assert.match(
      decodeSearchContent(service.signer, results[0]!.url, results[0]!.encrypted_content) ?? '',
      /hold hands while they sleep/,
    );
    // The user never wrote the URL: the search result made it fetchable.
    assert.equal(reply.content[4]?.tool_use_id, fetchUse?.id);
    const fetched = resultsOf(reply, 'web_fetch_tool_result')[0] as {
      type: string;
      url: string;
      content: { source: { data: string } };
    };
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
    assert.deepEqual(resultsOf(unseen, 'web_fetch_tool_result')[0], {
      type: 'web_fetch_tool_result_error',
      error_code: 'url_not_in_prior_context',
    });
  });

  test('the search blocks stream as SSE events, with the request counted in message_delta', async () => {
    const response = await postJson(service, '/v1/messages', {
      model: 'large',
      max_tokens: 300,
      stream: true,
      messages: [{ role: 'user', content: 'research otters' }],
      tools: [SEARCH_TOOL, FETCH_TOOL],
    });
    assert.equal(response.status, 200);
    const events = await readSse(response);
    const starts = events
      .filter((event) => event.event === 'content_block_start')
      .map((event) => event.data.content_block as Block);
    assert.deepEqual(
      starts.map((block) => block.type),
      ['server_tool_use', 'web_search_tool_result', 'text', 'server_tool_use', 'web_fetch_tool_result', 'text'],
    );
    const searchResult = starts[1]!;
    assert.equal(searchResult.tool_use_id, starts[0]?.id);
    assert.equal((searchResult.content as WebSearchResult[])[0]?.url, `${origin}/docs/otters.md`);
    // The server_tool_use block's input streams as JSON deltas, like a client tool's.
    const searchIndex = events.find((event) => event.event === 'content_block_start')?.data.index;
    const inputJson = events
      .filter((event) => event.event === 'content_block_delta' && event.data.index === searchIndex)
      .map((event) => (event.data.delta as { partial_json?: string }).partial_json ?? '')
      .join('');
    assert.deepEqual(JSON.parse(inputJson), { query: 'sea otters' });
    const delta = events.find((event) => event.event === 'message_delta')?.data as
      { usage: Reply['usage'] } | undefined;
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
    assert.deepEqual(
      new Set((resultsOf(all)[0] as WebSearchResult[]).map((result) => new URL(result.url).hostname)),
      new Set(['127.0.0.1', 'rivers.example.org']),
    );

    const allowed = await ask(
      service,
      [{ role: 'user', content: 'search rivers' }],
      [{ ...SEARCH_TOOL, allowed_domains: ['rivers.example.org'] }],
    );
    assert.deepEqual(
      (resultsOf(allowed)[0] as WebSearchResult[]).map((result) => result.url),
      ['https://rivers.example.org/world'],
    );

    const blocked = await ask(
      service,
      [{ role: 'user', content: 'search rivers' }],
      [{ ...SEARCH_TOOL, blocked_domains: ['example.org'] }],
    );
    const urls = (resultsOf(blocked)[0] as WebSearchResult[]).map((result) => result.url);
    assert.ok(urls.length > 0 && urls.every((url) => url.startsWith(`${origin}/docs/`)), urls.join());
  });

  test('web_fetch refuses a blocked or not-allowed domain, and a redirect into one, with url_not_allowed', async () => {
    const history = (
      await ask(service, [{ role: 'user', content: 'research otters' }], [SEARCH_TOOL, FETCH_TOOL])
    ).content.slice(0, 2);
    const messages = [
      { role: 'user', content: 'research otters' },
      { role: 'assistant', content: history },
      { role: 'user', content: 'fetch the earlier result' },
    ];
    const blocked = await ask(service, messages, [SEARCH_TOOL, { ...FETCH_TOOL, blocked_domains: ['127.0.0.1'] }]);
    assert.deepEqual(resultsOf(blocked, 'web_fetch_tool_result')[0], {
      type: 'web_fetch_tool_result_error',
      error_code: 'url_not_allowed',
    });
    const notAllowed = await ask(service, messages, [SEARCH_TOOL, { ...FETCH_TOOL, allowed_domains: ['example.com'] }]);
    assert.deepEqual(resultsOf(notAllowed, 'web_fetch_tool_result')[0], {
      type: 'web_fetch_tool_result_error',
      error_code: 'url_not_allowed',
    });
    const allowed = await ask(service, messages, [SEARCH_TOOL, { ...FETCH_TOOL, allowed_domains: ['127.0.0.1'] }]);
    assert.equal((resultsOf(allowed, 'web_fetch_tool_result')[0] as { type: string }).type, 'web_fetch_result');

    const redirect = [{ role: 'user', content: `fetch via redirect ${origin}/to-localhost` }];
    const followed = await ask(service, redirect, [FETCH_TOOL]);
    assert.equal(
      (resultsOf(followed, 'web_fetch_tool_result')[0] as { type: string }).type,
      'web_fetch_result',
      'the redirect itself works',
    );
    const refused = await ask(service, redirect, [{ ...FETCH_TOOL, blocked_domains: ['localhost'] }]);
    assert.deepEqual(resultsOf(refused, 'web_fetch_tool_result')[0], {
      type: 'web_fetch_tool_result_error',
      error_code: 'url_not_allowed',
    });
  });

  test('both lists on one tool, or an entry with a scheme, is a 400 that says so', async () => {
    for (const tool of [
      { ...SEARCH_TOOL, allowed_domains: ['a.com'], blocked_domains: ['b.com'] },
      { ...FETCH_TOOL, allowed_domains: [], blocked_domains: ['b.com'] },
    ]) {
      const response = await postJson(service, '/v1/messages', {
        model: 'large',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [tool],
      });
      assert.equal(response.status, 400);
      const body = (await response.json()) as { error: { type: string; message: string } };
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /^tools\.0: allowed_domains and blocked_domains cannot be used together/);
    }
    const scheme = await postJson(service, '/v1/messages', {
      model: 'large',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ ...SEARCH_TOOL, allowed_domains: ['example.com', 'https://example.org'] }],
    });
    assert.equal(scheme.status, 400);
    assert.match(
      ((await scheme.json()) as { error: { message: string } }).error.message,
      /^tools\.0\.allowed_domains\.1: "https:\/\/example\.org" is not a domain/,
    );
    const nulls = await postJson(service, '/v1/messages', {
      model: 'large',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ ...SEARCH_TOOL, allowed_domains: null, blocked_domains: ['b.com'] }],
    });
    assert.equal(nulls.status, 200, 'null is unset, as the official client types it');
  });
});
