/**
 * The URL comparison behind the web fetch url_not_in_prior_context rule (prior-context.ts),
 * without HTTP: URLs compared whole, prose punctuation left out, and which parts of a
 * conversation are trusted. The rule through the service: test/web-fetch-prior-context.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMessageRequest, type MessageRequest } from '@model-messages/protocol';
import { isInPriorContext, trustedUrls } from '../src/tools/web-fetch/prior-context.js';

describe('url_not_in_prior_context: the comparison, without HTTP', () => {
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
    assert.deepEqual([...trustedUrls(mentioned, [])], ['https://a.example/x', 'https://a.example/wiki/Otter_(animal)']);
  });

  test('the system prompt, client tool results and document URLs are trusted', () => {
    const conversation = request(
      [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { url: 'https://model.example/input' } }],
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
