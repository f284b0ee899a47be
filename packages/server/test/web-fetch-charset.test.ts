/**
 * Pages in other encodings than UTF-8 come back as the text they hold (body-encoding.ts): the
 * Content-Type charset, an HTML <meta> declaration, a byte order mark, and UTF-8 otherwise.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { useLoopbackFetch } from './loopback-fetch.js';

const latin1 = (text: string) => Buffer.from(text, 'latin1');
const ARTICLE = (body: string) =>
  `<article><h1>Desserts</h1><p>${body} ${'It is a dessert of cream under a layer of hard caramel. '.repeat(6)}</p></article>`;

/** Path -> [Content-Type, body bytes]. */
const PAGES: Record<string, [string, Buffer]> = {
  '/latin1.txt': ['text/plain; charset=iso-8859-1', latin1('café naïve')],
  '/quoted-label.txt': ['text/plain; charset="ISO-8859-1"', latin1('café')],
  '/meta-1252.html': [
    'text/html',
    latin1(
      `<html><head><meta charset="windows-1252"><title>Café</title></head><body>${ARTICLE('Crème brûlée – “burnt cream”.')}</body></html>`
        .replace('–', '\x96')
        .replace('“', '\x93')
        .replace('”', '\x94'),
    ),
  ],
  '/http-equiv.html': [
    'text/html',
    latin1(
      `<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><title>Café</title></head><body>${ARTICLE('Crème brûlée.')}</body></html>`,
    ),
  ],
  '/header-wins.html': [
    'text/html; charset=utf-8',
    Buffer.from(
      `<html><head><meta charset="windows-1252"><title>Café</title></head><body>${ARTICLE('Crème brûlée.')}</body></html>`,
      'utf8',
    ),
  ],
  '/utf16le-bom.txt': [
    'text/plain',
    Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello otters ✓', 'utf16le')]),
  ],
  '/bom-over-header.txt': [
    'text/plain; charset=iso-8859-1',
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('café', 'utf8')]),
  ],
  '/unknown-label.txt': ['text/plain; charset=no-such-encoding', Buffer.from('café', 'utf8')],
  '/no-label.txt': ['text/plain', Buffer.from('café', 'utf8')],
};

describe('a page in another encoding reads as its text', () => {
  const pages = useLoopbackFetch((request, response) => {
    const [contentType, body] = PAGES[request.url ?? ''] ?? ['text/plain', Buffer.alloc(0)];
    response.writeHead(200, { 'content-type': contentType }).end(body);
  });

  async function fetchPage(path: string): Promise<{ title: string | null; text: string }> {
    const block = await pages.fetchBlock(path);
    const content = block.content as { content: { title: string | null; source: { data: string } } };
    return { title: content.content.title, text: content.content.source.data };
  }

  test('iso-8859-1 text/plain, by its Content-Type charset (quoted or not, any case)', async () => {
    assert.equal((await fetchPage('/latin1.txt')).text, 'café naïve');
    assert.equal((await fetchPage('/quoted-label.txt')).text, 'café');
  });

  test('windows-1252 HTML by its <meta charset>, the characters Latin-1 lacks included', async () => {
    const page = await fetchPage('/meta-1252.html');
    assert.equal(page.title, 'Café');
    assert.match(page.text, /Crème brûlée – “burnt cream”\./);
  });

  test('HTML by its <meta http-equiv="Content-Type">', async () => {
    const page = await fetchPage('/http-equiv.html');
    assert.equal(page.title, 'Café');
    assert.match(page.text, /Crème brûlée\./);
  });

  test('the Content-Type charset wins over a <meta> declaration', async () => {
    assert.match((await fetchPage('/header-wins.html')).text, /Crème brûlée\./);
  });

  test('UTF-16LE by its byte order mark; a byte order mark wins over the Content-Type charset', async () => {
    assert.equal((await fetchPage('/utf16le-bom.txt')).text, 'hello otters ✓');
    assert.equal((await fetchPage('/bom-over-header.txt')).text, 'café');
  });

  test('an unknown label, or none, is UTF-8', async () => {
    assert.equal((await fetchPage('/unknown-label.txt')).text, 'café');
    assert.equal((await fetchPage('/no-label.txt')).text, 'café');
  });
});
