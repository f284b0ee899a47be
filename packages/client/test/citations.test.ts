import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContentBlock } from '@model-messages/protocol';
import { citationMarkers, collectSources, mapCitations } from '../src/research/citations.js';

const search = (id: string, results: Array<[string, string]>): ContentBlock => ({
  type: 'web_search_tool_result',
  tool_use_id: id,
  content: results.map(([url, title]) => ({
    type: 'web_search_result',
    url,
    title,
    encrypted_content: 'x',
    page_age: null,
  })),
});
const fetched = (id: string, url: string, title: string): ContentBlock => ({
  type: 'web_fetch_tool_result',
  tool_use_id: id,
  content: {
    type: 'web_fetch_result',
    url,
    content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: '...' }, title },
    retrieved_at: '2026-01-01T00:00:00Z',
  },
});
const blocks: ContentBlock[] = [
  { type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'acme founder' } },
  search('s1', [
    ['https://a.example/1', 'A one'],
    ['https://b.example/2', 'B two'],
  ]),
  { type: 'server_tool_use', id: 's2', name: 'web_search', input: { query: 'acme year' } },
  {
    type: 'web_search_tool_result',
    tool_use_id: 's2',
    content: { type: 'web_search_tool_result_error', error_code: 'unavailable' },
  },
  search('s3', [
    ['https://b.example/2', 'B again'],
    ['https://c.example/3', 'C three'],
  ]),
  fetched('f1', 'https://d.example/page', 'D page'),
  { type: 'text', text: 'Acme was founded in 1901 [2][4].', citations: null },
];

test('sources are numbered in order of first appearance, deduplicated by URL, error results skipped', () => {
  assert.deepEqual(collectSources(blocks), [
    { index: 1, url: 'https://a.example/1', title: 'A one', from: 'web_search' },
    { index: 2, url: 'https://b.example/2', title: 'B two', from: 'web_search' },
    { index: 3, url: 'https://c.example/3', title: 'C three', from: 'web_search' },
    { index: 4, url: 'https://d.example/page', title: 'D page', from: 'web_fetch' },
  ]);
});

test('[n] markers, lists and repeats are read in order of first appearance', () => {
  assert.deepEqual(citationMarkers('A [2]. B [1, 3]. C [2][4]. Not a marker: [x] or [].'), [2, 1, 3, 4]);
});

test('each marker maps to its source; numbers with no source are listed as unresolved', () => {
  const map = mapCitations('Founded by Jane Roe [1] in 1901 [4]; profitable since 1950 [7].', blocks);
  assert.deepEqual(
    map.citations.map((citation) => [citation.marker, citation.source?.url]),
    [
      [1, 'https://a.example/1'],
      [4, 'https://d.example/page'],
      [7, undefined],
    ],
  );
  assert.deepEqual(map.unresolved, [7]);
  assert.deepEqual(mapCitations('No citations at all.', []), { sources: [], citations: [], unresolved: [] });
});
