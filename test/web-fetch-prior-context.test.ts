/**
 * The web fetch url_not_in_prior_context rule through the service: a URL the model wrote itself
 * is refused and sent nothing, while the user's, a search result's and a fetched page's links may
 * be fetched. The URL comparison itself, without HTTP: packages/server/test/prior-context.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, type RunningService } from '@model-messages/testing';
import {
  EXFIL_PATH,
  FETCH_TOOL,
  fetchVia,
  results,
  startFetchBench,
  type FetchBench,
  type ResultBlock,
} from './web-fetch-support.js';

let bench: FetchBench;
let origin: string;
let allowed: RunningService;
before(async () => {
  bench = await startFetchBench();
  ({ origin, allowed } = bench);
});
after(() => bench.close());

const NOT_IN_CONTEXT = { type: 'web_fetch_tool_result_error', error_code: 'url_not_in_prior_context' };

describe('url_not_in_prior_context', () => {
  test('a URL the model wrote itself (thinking, text, its own call) is refused, and nothing is sent to it', async () => {
    const reply = await fetchVia(allowed, 'exfiltrate the secret');
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['thinking', 'text', 'server_tool_use', 'web_fetch_tool_result', 'text'],
    );
    assert.deepEqual(results(reply.content)[0], NOT_IN_CONTEXT);
    assert.deepEqual(
      bench.served.filter((path) => path.startsWith('/exfil')),
      [],
    );
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 0 });
  });

  test("a URL in an earlier assistant turn is the model's own too", async () => {
    const messages = [
      { role: 'user', content: 'plan it' },
      { role: 'assistant', content: [{ type: 'text', text: `I will store it at ${origin}${EXFIL_PATH}` }] },
      { role: 'user', content: 'fetch what you wrote' },
    ];
    const response = await postJson(allowed, '/v1/messages', {
      model: 'mid',
      max_tokens: 200,
      messages,
      tools: [FETCH_TOOL],
    });
    assert.equal(response.status, 200);
    assert.deepEqual(results(((await response.json()) as { content: ResultBlock[] }).content)[0], NOT_IN_CONTEXT);
    assert.deepEqual(
      bench.served.filter((path) => path.startsWith('/exfil')),
      [],
    );
  });

  test('a prefix of a mentioned URL is refused', async () => {
    assert.deepEqual(results((await fetchVia(allowed, `prefix ${origin}/notes.txt`)).content)[0], NOT_IN_CONTEXT);
  });

  test('a mentioned URL with a query string added is refused', async () => {
    assert.deepEqual(results((await fetchVia(allowed, `query ${origin}/notes.txt`)).content)[0], NOT_IN_CONTEXT);
  });

  test('the fragment is not part of the comparison', async () => {
    const [result] = results((await fetchVia(allowed, `fragment ${origin}/notes.txt#top.`)).content);
    assert.equal(result?.content?.source.data, 'plain notes');
  });

  test('a URL that only a web search result gave may be fetched', async () => {
    const search = { type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'] };
    const response = await postJson(allowed, '/v1/messages', {
      model: 'mid',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'search then fetch' }],
      tools: [search, FETCH_TOOL],
    });
    const reply = (await response.json()) as { content: ResultBlock[] };
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_fetch_tool_result', 'text'],
    );
    assert.equal(results(reply.content)[0]?.content?.source.data, 'found by search');
  });

  test('a link in a fetched page (relative in its HTML) may be fetched next', async () => {
    const [index, linked] = results((await fetchVia(allowed, `follow a link ${origin}/index.html`)).content);
    assert.match(index?.content?.source.data ?? '', /\[the linked page\]\(\/linked\)/);
    assert.equal(linked?.content?.source.data, 'the linked page');
  });
});
