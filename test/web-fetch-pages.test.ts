/**
 * The web fetch server tool on pages served on loopback: HTML as markdown, text and JSON as they
 * are, redirects, the error codes, huge and slow pages, maxBytes and max_content_tokens, max_uses,
 * and how a turn's context budget is shared between fetches and searches.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMessageRequest } from '@model-messages/protocol';
import { JSON_BODY, LONG_TITLE, postJson, type RunningService } from '@model-messages/testing';
import { WebFetchTool } from '../packages/server/src/tools/web-fetch/web-fetch-tool.js';
import { decodeSearchContent } from '../packages/server/src/signing/search-content.js';
import { FETCH_TOOL, fetchVia, results, startFetchBench, type FetchBench, type Reply } from './web-fetch-support.js';

let bench: FetchBench;
let origin: string;
let allowed: RunningService;
/** maxBytes at its minimum (1024) and a time limit no test waits out. */
let patient: RunningService;
before(async () => {
  bench = await startFetchBench();
  ({ origin, allowed, patient } = bench);
});
after(() => bench.close());

describe('web fetch', () => {
  test('an HTML page comes back as readable markdown of its article, and the turn goes on', async () => {
    const reply = await fetchVia(allowed, `fetch ${origin}/article`);
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'web_fetch_tool_result', 'text'],
    );
    const [result] = results(reply.content);
    assert.equal(result?.type, 'web_fetch_result');
    assert.equal(result?.content?.title, 'Otters');
    assert.match(result?.content?.source.data ?? '', /# Sea otters/);
    assert.match(result?.content?.source.data ?? '', /hold hands while they sleep/);
    assert.doesNotMatch(result?.content?.source.data ?? '', /About|Copyright/);
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 1 });
  });

  test('plain text comes back as it is, after a redirect', async () => {
    const [result] = results((await fetchVia(allowed, `fetch ${origin}/redirect`)).content);
    assert.equal(result?.content?.source.data, 'plain notes');
    assert.equal(result?.url, `${origin}/notes.txt`);
  });

  const errors: Array<[string, string]> = [
    ['image.png', 'unsupported_content_type'],
    ['slow', 'url_not_accessible'],
    ['missing', 'url_not_accessible'],
    ['redirect-loop', 'url_not_accessible'],
    ['redirect-metadata', 'url_not_allowed'],
  ];
  for (const [page, code] of errors) {
    test(`/${page} is the ${code} error block`, async () => {
      const reply = await fetchVia(allowed, `fetch ${origin}/${page}`);
      assert.deepEqual(results(reply.content)[0], { type: 'web_fetch_tool_result_error', error_code: code });
      assert.equal(reply.content.at(-1)?.text, 'Done.');
    });
  }

  test('a huge page is cut at max_content_tokens (4 characters a token), and the text says it was cut', async () => {
    const [result] = results((await fetchVia(allowed, `fetch ${origin}/huge`, { max_content_tokens: 100 })).content);
    const data = result?.content?.source.data ?? '';
    assert.equal(data.length, 400);
    assert.match(
      data,
      /^x+\n\n\[Truncated: the page is longer than the 50000 bytes this service reads; its text goes on past the 400 characters this fetch may return\.\]$/,
    );
  });

  test('a page past maxBytes is cut there, with a note, though the budget had room for more', async () => {
    const [result] = results(
      (await fetchVia(patient, `fetch ${origin}/huge`, { max_content_tokens: 100_000 })).content,
    );
    assert.equal(
      result?.content?.source.data,
      `${'x'.repeat(1024)}\n\n[Truncated: the page is longer than the 1024 bytes this service reads.]`,
    );
  });

  test('a page that fits comes back whole, with no note', async () => {
    const [result] = results(
      (await fetchVia(allowed, `fetch ${origin}/notes.txt`, { max_content_tokens: 100 })).content,
    );
    assert.equal(result?.content?.source.data, 'plain notes');
  });

  test('JSON comes back as it is', async () => {
    const [result] = results((await fetchVia(allowed, `fetch ${origin}/data.json`)).content);
    assert.equal(result?.type, 'web_fetch_result');
    assert.equal(result?.content?.source.data, JSON_BODY);
  });

  test(
    'a 429 is too_many_requests, and its body is dropped rather than left holding the connection',
    { timeout: 20_000 },
    async () => {
      const [result] = results((await fetchVia(patient, `fetch ${origin}/limited`)).content);
      assert.deepEqual(result, { type: 'web_fetch_tool_result_error', error_code: 'too_many_requests' });
      // The body never ends and the service's time limit is a minute: only a destroyed body closes this now.
      await bench.limitedClosed;
    },
  );

  test('without max_content_tokens the input headroom is divided across the allowed fetches', async () => {
    const [result] = results((await fetchVia(allowed, `fetch ${origin}/huge`, { max_uses: 4 })).content);
    const length = result?.content?.source.data.length ?? 0;
    // Window 4096, max_tokens 200, a prompt of a few hundred tokens: under (4096 - 200) / 4 tokens each.
    assert.ok(length > 2000 && length <= ((4096 - 200) / 4) * 4, String(length));
  });

  test('past max_uses the call gets max_uses_exceeded and the model goes on', async () => {
    const reply = await fetchVia(allowed, `twice ${origin}/notes.txt ${origin}/article`, { max_uses: 1 });
    const [first, second] = results(reply.content);
    assert.equal(first?.type, 'web_fetch_result');
    assert.deepEqual(second, { type: 'web_fetch_tool_result_error', error_code: 'max_uses_exceeded' });
  });

  test('a URL the conversation never mentioned is url_not_in_prior_context', async () => {
    const [result] = results((await fetchVia(allowed, 'unmentioned')).content);
    assert.deepEqual(result, { type: 'web_fetch_tool_result_error', error_code: 'url_not_in_prior_context' });
  });
});

/** The test models' window is 4096 tokens and fetchVia asks for max_tokens 200: the rest, at 4 characters a token. */
function headroomCharacters(reply: Reply): number {
  return (4096 - reply.usage.input_tokens - 200) * 4;
}

describe('context budget of a turn', () => {
  const url = () => `${origin}/huge`;

  test('without max_uses, 5 fetches are assumed, and each gets its share of what earlier results left', async () => {
    const reply = await fetchVia(allowed, `two huge ${url()}`, { max_uses: undefined });
    const headroom = headroomCharacters(reply);
    const first = Math.floor(headroom / 5);
    const second = Math.floor((headroom - first) / 4);
    const [one, two] = results(reply.content);
    // A page's share holds its text, URL and title (a text/plain page has none).
    assert.equal(one?.content?.source.data.length, first - url().length);
    assert.equal(two?.content?.source.data.length, second - url().length);
  });

  test('search results are taken out of the headroom before the next fetch gets its share', async () => {
    const tools = [
      { type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'], max_uses: 1 },
      { ...FETCH_TOOL, max_uses: 2 },
    ];
    const response = await postJson(allowed, '/v1/messages', {
      model: 'mid',
      max_tokens: 200,
      messages: [{ role: 'user', content: `budget search ${url()}` }],
      tools,
    });
    const reply = (await response.json()) as Reply;
    const hits = reply.content.find((block) => block.type === 'web_search_tool_result')?.content as unknown as Array<{
      url: string;
      title: string;
      page_age: string | null;
      encrypted_content: string;
    }>;
    const searchCharacters = hits.reduce(
      (sum, hit) =>
        sum +
        hit.url.length +
        hit.title.length +
        (hit.page_age ?? '').length +
        (decodeSearchContent(allowed.signer, hit.url, hit.encrypted_content) ?? '').length,
      0,
    );
    assert.ok(searchCharacters > 0);
    // The search used its one call: the fetch's 2 calls share what the search left.
    const [page] = results(reply.content);
    assert.equal(
      page?.content?.source.data.length,
      Math.floor((headroomCharacters(reply) - searchCharacters) / 2) - url().length,
    );
  });

  test('max_content_tokens is a cap within the share: the headroom is still divided across the fetches allowed', async () => {
    const reply = await fetchVia(allowed, `two huge ${url()}`, { max_content_tokens: 100_000 });
    const headroom = headroomCharacters(reply);
    const first = Math.floor(headroom / 5);
    const [one, two] = results(reply.content);
    assert.equal(one?.content?.source.data.length, first - url().length);
    assert.equal(two?.content?.source.data.length, Math.floor((headroom - first) / 4) - url().length);
  });

  test('a share too small for even the truncation note is not fetched: max_uses_exceeded, no request made or counted', async () => {
    // A system prompt of 3,636 words leaves (4096 - 3766 - 200) * 4 = 520 characters of headroom:
    // a fifth, less the URL, cannot hold the note that says a page was cut.
    const body = {
      model: 'mid',
      max_tokens: 200,
      system: 'word '.repeat(3636),
      messages: [{ role: 'user', content: `fetch ${origin}/notes.txt` }],
      tools: [{ ...FETCH_TOOL, max_content_tokens: 20_000 }],
    };
    const before = bench.served.length;
    const reply = (await (await postJson(allowed, '/v1/messages', body)).json()) as Reply;
    assert.equal(headroomCharacters(reply), 520);
    assert.deepEqual(results(reply.content), [
      { type: 'web_fetch_tool_result_error', error_code: 'max_uses_exceeded' },
    ]);
    assert.equal(reply.usage.server_tool_use?.web_fetch_requests, 0);
    assert.deepEqual(bench.served.slice(before), []);
  });

  test('a title longer than the share gives way, so that the text keeps the note that says it was cut', async () => {
    const url = `${origin}/long-title`;
    const tool = new WebFetchTool({
      allowNetworks: ['127.0.0.1/32'],
      maxBytes: 50_000,
      timeoutMs: 2_000,
      maxRedirects: 3,
      conversionTimeoutMs: 10_000,
    });
    const request = parseMessageRequest({
      model: 'mid',
      max_tokens: 10,
      messages: [{ role: 'user', content: `read ${url}` }],
      tools: [FETCH_TOOL],
    });
    const share = url.length + 300;
    try {
      const result = await tool.run(
        { type: 'server_tool_use', id: 'srvtoolu_title', name: 'web_fetch', input: { url } },
        { request, turnSoFar: [], resultCharacters: share, signal: new AbortController().signal },
      );
      const page = result.content as { content: { title: string; source: { data: string } } };
      const { title, source } = page.content;
      assert.ok(title.length > 0 && LONG_TITLE.startsWith(title) && title.length < LONG_TITLE.length, title);
      assert.match(
        source.data,
        /^Ot\w*\n\n\[Truncated: its text goes on past the \d+ characters this fetch may return\.\]$/,
      );
      assert.equal(url.length + title.length + source.data.length, share);
    } finally {
      await tool.close();
    }
  });
});
