/** The web search providers against fake APIs on loopback: SearXNG and Brave, their requests, results and error codes. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebSearchResult } from '@model-messages/testing';
import { BraveSearchProvider } from '../src/tools/web-search/brave-provider.js';
import { decodeSearchContent } from '../src/signing/search-content.js';
import { SearxngSearchProvider } from '../src/tools/web-search/searxng-provider.js';
import { errorCode, never, runTool, stop, TOOL_SIGNER } from './web-search-support.js';

interface Recorded {
  url: URL;
  headers: IncomingMessage['headers'];
}

/** A fake search API on loopback: answers `respond(url)` and records each request. */
async function fakeApi(
  respond: (url: URL) => { status: number; body: unknown },
): Promise<{ server: Server; origin: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    requests.push({ url, headers: request.headers });
    const { status, body } = respond(url);
    if (status === 0) return; // never answers: for the time limit
    response
      .writeHead(status, { 'content-type': 'application/json' })
      .end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

describe('SearXNG provider', () => {
  test('GET /search?q=...&format=json, results mapped to hits', async () => {
    const api = await fakeApi(() => ({
      status: 200,
      body: {
        query: 'otters',
        results: [
          {
            url: 'https://a.example.com/otters',
            title: 'Otters &amp; friends',
            content: 'Otters <b>hold</b> hands.',
            publishedDate: '2024-01-02T00:00:00',
            engine: 'x',
          },
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
        {
          url: 'https://a.example.com/otters',
          title: 'Otters & friends',
          pageAge: '2024-01-02T00:00:00',
          content: 'Otters hold hands.',
        },
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
      for (status of [403, 500, 200])
        assert.equal(errorCode(await runTool(provider, { query: 'otters' })), 'unavailable', String(status));
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
        {
          title: 'Sea <strong>otters</strong>',
          url: 'https://www.otters.example.com/sea',
          description: 'Sea <strong>otters</strong> hold hands.',
          extra_snippets: ['They use stones.'],
          page_age: '2024-06-01T08:00:00',
          age: 'June 1, 2024',
        },
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
      assert.deepEqual(hits[0], {
        url: 'https://www.otters.example.com/sea',
        title: 'Sea otters',
        pageAge: '2024-06-01T08:00:00',
        content: 'Sea otters hold hands.\nThey use stones.',
      });
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
      const results = block.content as WebSearchResult[];
      assert.deepEqual(
        results.map((result) => result.url),
        ['https://www.otters.example.com/sea', 'https://rivers.example.org/otters'],
      );
      assert.deepEqual(Object.keys(results[0]!).sort(), ['encrypted_content', 'page_age', 'title', 'type', 'url']);
      assert.equal(results[0]?.type, 'web_search_result');
      assert.equal(
        decodeSearchContent(TOOL_SIGNER, results[0]!.url, results[0]!.encrypted_content),
        'Sea otters hold hands.\nThey use stones.',
      );

      const allowed = await runTool(provider, { query: 'otters' }, { allowed_domains: ['otters.example.com'] });
      assert.deepEqual(
        (allowed.content as WebSearchResult[]).map((result) => result.url),
        ['https://www.otters.example.com/sea'],
      );
    } finally {
      stop(api.server);
    }
  });

  test('429 is too_many_requests, 500 is unavailable, a query with no web section has no results', async () => {
    let status = 429;
    const api = await fakeApi(() => ({
      status,
      body: status === 200 ? { type: 'search', query: { original: 'zzz' } } : { type: 'ErrorResponse' },
    }));
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
      assert.equal(
        errorCode(await runTool(new BraveSearchProvider('k', api.origin), { query: 'otters' }, {}, 200)),
        'unavailable',
      );
    } finally {
      stop(api.server);
    }
    // A port nothing listens on.
    assert.equal(
      errorCode(await runTool(new BraveSearchProvider('k', api.origin), { query: 'otters' })),
      'unavailable',
    );
  });
});
