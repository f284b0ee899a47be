/**
 * HTML as a model reads it (html-to-markdown.ts) for pages Readability finds no article in or
 * refuses: valid HTML5 that leaves out its optional tags, a fragment, text with no tag at all,
 * an empty page. Each reads as its body text; an empty page is an empty document, not an error.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { htmlToMarkdown } from '../src/tools/web-fetch/html-to-markdown.js';
import { useLoopbackFetch } from './loopback-fetch.js';

describe('pages that leave out optional tags', () => {
  const cases: Array<[string, string, { title: string | null; text: string }]> = [
    [
      'no <head> or <body> (valid HTML5)',
      '<!DOCTYPE html><html lang=en><title>Otters</title><p>Otters hold hands while they sleep.</p></html>',
      { title: 'Otters', text: 'Otters hold hands while they sleep.' },
    ],
    [
      'no <html>, <head> or <body>',
      '<!DOCTYPE html><title>Otters</title><p>Otters hold hands while they sleep.</p>',
      { title: 'Otters', text: 'Otters hold hands while they sleep.' },
    ],
    [
      'a head but no <body>',
      '<html><head><title>T</title></head><p>no body tag here</p></html>',
      { title: 'T', text: 'no body tag here' },
    ],
    [
      'a <meta> and a heading before the text',
      '<!doctype html>\n<meta charset=utf-8>\n<title>T</title>\n<h1>Heading</h1><p>Body text</p>',
      { title: 'T', text: '## Heading\n\nBody text' },
    ],
    [
      'an unclosed <body>',
      '<!DOCTYPE html><html><head><title>T</title></head><body><p>ok</p>',
      { title: 'T', text: 'ok' },
    ],
    ['a fragment', '<p>hello otters</p>', { title: null, text: 'hello otters' }],
    ['words with no tag at all', 'plain words served as html', { title: null, text: 'plain words served as html' }],
    ['an empty page', '', { title: null, text: '' }],
    ['only a comment and a script', '<!-- nothing --><script>var x = 1;</script>', { title: null, text: '' }],
  ];
  for (const [label, html, expected] of cases) {
    test(`${label} reads as its text`, () => {
      assert.deepEqual(htmlToMarkdown(html), expected);
    });
  }
});

describe('through the web fetch tool', () => {
  const pages = useLoopbackFetch((request, response) => {
    const body =
      request.url === '/implied-tags'
        ? '<!DOCTYPE html><html lang=en><title>Otters</title><p>Otters hold hands while they sleep.</p></html>'
        : '';
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });

  async function fetchContent(path: string): Promise<unknown> {
    const block = await pages.fetchBlock(path);
    const content = block.content as { type: string; content?: { title: string | null; source: { data: string } } };
    return content.type === 'web_fetch_result'
      ? { title: content.content?.title, text: content.content?.source.data }
      : content;
  }

  test('a page without optional tags comes back with its text', async () => {
    assert.deepEqual(await fetchContent('/implied-tags'), {
      title: 'Otters',
      text: 'Otters hold hands while they sleep.',
    });
  });

  test('an empty text/html page is an empty document, not url_not_accessible', async () => {
    assert.deepEqual(await fetchContent('/empty'), { title: null, text: '' });
  });
});
