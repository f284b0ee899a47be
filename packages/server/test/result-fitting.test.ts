/**
 * Each server tool cuts a result it made to fewer characters as it cuts one to its share
 * (ServerToolRunner.fit): the turn's context budget asks it to when the backend counted the
 * result in more tokens than its share (agent/context-budget.ts, issue 32).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerToolResultBlock } from '@model-messages/protocol';
import { resultCharacters } from '../src/agent/context-budget.js';
import { ServiceTools } from '../src/tools/service-tools.js';
import { encodeSearchContent } from '../src/signing/search-content.js';
import { markReadable, readableText } from '../src/tool-kinds/readable-search-results.js';
import { TOOL_SIGNER } from './web-search-support.js';

const tools = new ServiceTools(
  {
    webFetch: {
      allowNetworks: [],
      maxBytes: 50_000,
      timeoutMs: 1_000,
      maxRedirects: 0,
      conversionTimeoutMs: 1_000,
    },
  },
  TOOL_SIGNER,
);

test('a fetched page keeps its URL and title; its text is cut, ending in the note that says so', () => {
  const page: ServerToolResultBlock = {
    type: 'web_fetch_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: {
      type: 'web_fetch_result',
      url: 'https://a.example/',
      content: {
        type: 'document',
        source: { type: 'text', media_type: 'text/plain', data: 'x'.repeat(5000) },
        title: 'A page',
      },
      retrieved_at: '2026-01-01T00:00:00.000Z',
    },
  };
  const cut = tools.fit(page, 500);
  assert.equal(resultCharacters(cut), 500);
  const data = (cut.content as { content: { source: { data: string } } }).content.source.data;
  assert.match(data, /^x+\n\n\[Truncated: its text goes on past the 476 characters this fetch may return\.\]$/);
  assert.equal((cut.content as { url: string }).url, 'https://a.example/');
});

test('search results are fitted again in rank order, their text still readable to this service', () => {
  const result = (index: number) => {
    const url = `https://b.example/${index}`;
    const item = {
      type: 'web_search_result',
      url,
      title: `Result ${index}`,
      page_age: null,
      encrypted_content: encodeSearchContent(TOOL_SIGNER, url, 'y'.repeat(400)),
    };
    markReadable(item, 'y'.repeat(400));
    return item;
  };
  const search: ServerToolResultBlock = {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_2',
    content: [result(1), result(2), result(3)],
  };
  const cut = tools.fit(search, 600);
  assert.ok(resultCharacters(cut) <= 600, String(resultCharacters(cut)));
  const kept = cut.content as Array<{ url: string }>;
  assert.deepEqual(
    kept.map((item) => item.url),
    ['https://b.example/1', 'https://b.example/2', 'https://b.example/3'].slice(0, kept.length),
  );
  assert.ok(kept.every((item) => (readableText(item) ?? '').startsWith('yyy')));
  assert.deepEqual(tools.fit(search, 10).content, {
    type: 'web_search_tool_result_error',
    error_code: 'max_uses_exceeded',
  });
});

test('code output is cut as fitOutput cuts it, its return code kept; an error result is left as it is', () => {
  const output: ServerToolResultBlock = {
    type: 'code_execution_tool_result',
    tool_use_id: 'srvtoolu_3',
    content: { type: 'code_execution_result', stdout: 'o'.repeat(1000), stderr: '', return_code: 0, content: [] },
  };
  const cut = tools.fit(output, 200);
  assert.equal(resultCharacters(cut), 200);
  assert.equal((cut.content as { return_code: number }).return_code, 0);
  const failed: ServerToolResultBlock = {
    type: 'code_execution_tool_result',
    tool_use_id: 'srvtoolu_4',
    content: { type: 'code_execution_tool_result_error', error_code: 'unavailable' },
  };
  assert.equal(tools.fit(failed, 0), failed);
});
