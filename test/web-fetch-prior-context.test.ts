/**
 * The web fetch url_not_in_prior_context rule: a URL the model wrote itself is refused and sent
 * nothing, while the user's, a search result's and a fetched page's links may be fetched; and the
 * URL comparison itself, without HTTP.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMessageRequest, type MessageRequest } from '@mms/protocol';
import { postJson, type RunningService } from '@mms/testing';
import { isInPriorContext, trustedUrls } from '../packages/server/src/tools/web-fetch/prior-context.js';
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

  describe('the comparison, without HTTP', () => {
    const request = (messages: unknown[], system?: unknown): MessageRequest =>
      parseMessageRequest({ model: 'm', max_tokens: 10, messages, ...(system === undefined ? {} : { system }) });
    const user = (content: unknown) => request([{ role: 'user', content }]);

    test('URLs are compared whole: no host or path prefix, scheme and host case do not matter', () => {
      const mentioned = user('see https://docs.example.com/guide/intro and http://Example.ORG:80/A');
      assert.equal(isInPriorContext('https://docs.example.com/guide/intro', mentioned, []), true);
      assert.equal(isInPriorContext('https://docs.example.co', mentioned, []), false);
      assert.equal(isInPriorContext('https://docs.example.com/guide', mentioned, []), false);
      assert.equal(isInPriorContext('https://docs.example.com/guide/intro/more', mentioned, []), false);
      assert.equal(isInPriorContext('HTTP://example.org/A#part', mentioned, []), true);
      assert.equal(isInPriorContext('http://example.org/a', mentioned, []), false, 'the path keeps its case');
    });

    test('prose punctuation around a URL is not part of it', () => {
      const mentioned = user('Read (https://a.example/x), then https://a.example/wiki/Otter_(animal).');
      assert.deepEqual(
        [...trustedUrls(mentioned, [])],
        ['https://a.example/x', 'https://a.example/wiki/Otter_(animal)'],
      );
    });

    test('the system prompt, client tool results and document URLs are trusted', () => {
      const conversation = request(
        [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { url: 'https://model.example/input' } },
            ],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_1',
                content: [{ type: 'text', text: 'https://client.example/result' }],
              },
              { type: 'document', source: { type: 'url', url: 'https://client.example/paper.pdf' } },
            ],
          },
        ],
        'Sources: https://system.example/',
      );
      assert.deepEqual([...trustedUrls(conversation, [])].sort(), [
        'https://client.example/paper.pdf',
        'https://client.example/result',
        'https://system.example/',
      ]);
    });

    test("the model's blocks and code output are never trusted; search and fetch results are", () => {
      const turn = [
        { type: 'text', text: 'https://model.example/text' },
        { type: 'thinking', thinking: 'https://model.example/thinking', signature: '' },
        {
          type: 'server_tool_use',
          id: 'srvtoolu_1',
          name: 'code_execution',
          input: { code: 'print("https://model.example/code")' },
        },
        {
          type: 'code_execution_tool_result',
          tool_use_id: 'srvtoolu_1',
          content: {
            type: 'code_execution_result',
            stdout: 'https://model.example/stdout\n',
            stderr: '',
            return_code: 0,
            content: [],
          },
        },
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_2',
          content: [
            {
              type: 'web_search_result',
              url: 'https://search.example/hit',
              title: 't',
              page_age: null,
              encrypted_content: '',
            },
          ],
        },
        {
          type: 'web_fetch_tool_result',
          tool_use_id: 'srvtoolu_3',
          content: {
            type: 'web_fetch_result',
            url: 'https://fetch.example/page',
            content: {
              type: 'document',
              source: {
                type: 'text',
                media_type: 'text/plain',
                data: 'See [next](/next) and https://other.example/x.',
              },
              title: null,
            },
          },
        },
      ];
      assert.deepEqual([...trustedUrls(user('go'), turn)].sort(), [
        'https://fetch.example/next',
        'https://fetch.example/page',
        'https://other.example/x',
        'https://search.example/hit',
      ]);
    });
  });
});
