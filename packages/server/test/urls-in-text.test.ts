/**
 * The URL scanner behind url_not_in_prior_context, without HTTP: URLs in prose, the links of a
 * page after its real conversion to markdown, and its work bounded by the input's length (a
 * request may be 32 MB).
 */
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { htmlToMarkdown } from '../src/tools/web-fetch/html-to-markdown.js';
import { linksInPage, urlsInText } from '../src/tools/web-fetch/urls-in-text.js';

/** Inputs of 200,000 characters: linear work finishes in moments, quadratic work in minutes. */
const LARGE = 200_000;
// The source through tsx, or its compiled form under plain node (`npm test`).
const SCANNER_MODULE = import.meta.resolve('../src/tools/web-fetch/urls-in-text.js');
const LOADER = SCANNER_MODULE.endsWith('.ts') ? ['--import', 'tsx'] : [];
const CHILD_SCAN = `
const [scanner, pageUrl] = process.argv.slice(1);
const { urlsInText, linksInPage } = await import(${JSON.stringify(SCANNER_MODULE)});
let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
process.stdout.write(JSON.stringify(scanner === 'linksInPage' ? linksInPage(text, pageUrl) : urlsInText(text)));
`;

/**
 * The scanner's answer for `text`, from a child process killed after a minute. A quadratic scan
 * of these inputs runs for minutes and blocks the thread it runs on, where no test timeout can
 * stop it: only a separate process turns it into a failure rather than a hung run.
 */
function scanWithinBound(scanner: 'urlsInText' | 'linksInPage', text: string, pageUrl = ''): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...LOADER, '--input-type=module', '-e', CHILD_SCAN, scanner, pageUrl], {
      timeout: 60_000,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (signal !== null)
        reject(
          new Error(`the scan did not finish within its bound (${signal}): its work is no longer linear in the input`),
        );
      else if (code !== 0) reject(new Error(`the scan failed with exit code ${code}`));
      else resolve(JSON.parse(output) as string[]);
    });
    child.stdin.end(text);
  });
}

describe('URLs in text', () => {
  test('closing brackets a URL does not open are prose, and balanced ones are part of it', () => {
    assert.deepEqual(urlsInText('(see https://a.example/x_(y)]), [https://a.example/z].'), [
      'https://a.example/x_(y)',
      'https://a.example/z',
    ]);
  });

  test('a candidate longer than 2048 characters is no URL (fetch refuses over 250), and one of 2048 is', () => {
    const path = (length: number) => 'p'.repeat(length - 'https://a.example/'.length);
    assert.deepEqual(urlsInText(`https://a.example/${path(2048)}`), [`https://a.example/${path(2048)}`]);
    assert.deepEqual(urlsInText(`https://a.example/${path(2049)}`), []);
  });
});

const PAGE_URL = 'https://site.example/dir/page';

/** The links of `html` as web fetch reads them: Readability and Turndown, then the scan. */
function linksOfHtml(html: string): string[] {
  const article = `<article><h1>Planets</h1><p>${'Some words about the planets of the solar system. '.repeat(12)}</p>${html}</article>`;
  const { text } = htmlToMarkdown(`<html><head><title>Planets</title></head><body>${article}</body></html>`);
  return linksInPage(text, PAGE_URL).sort();
}

describe('links of a fetched page, after its conversion to markdown', () => {
  test('a link target with parentheses is the whole URL, not a prefix of it', () => {
    assert.deepEqual(linksOfHtml('<p>Read <a href="https://en.wikipedia.org/wiki/Mercury_(planet)">Mercury</a>.</p>'), [
      'https://en.wikipedia.org/wiki/Mercury_(planet)',
    ]);
  });

  test('a URL written in the text keeps the underscores Turndown escaped', () => {
    assert.deepEqual(
      linksOfHtml('<p>See https://example.com/some_page_name and https://example.com/a*b*c today.</p>'),
      ['https://example.com/a*b*c', 'https://example.com/some_page_name'],
    );
  });

  test('a link target with a space (written `<...>`) is the whole URL', () => {
    assert.deepEqual(linksOfHtml('<p>See <a href="https://example.com/path with space">this</a>.</p>'), [
      'https://example.com/path%20with%20space',
    ]);
  });

  test('relative targets with parentheses, brackets or a title resolve against the page', () => {
    const html =
      '<p>See <a href="notes_(draft).html">notes</a>, <a href="/list[1]">list</a> and <a href="https://t.example/x" title="The title">t</a>.</p>';
    assert.deepEqual(linksOfHtml(html), [
      'https://site.example/dir/notes_(draft).html',
      'https://site.example/list[1]',
      'https://t.example/x',
    ]);
  });

  test('an escaped `](` in the text is prose, not a link target', () => {
    assert.deepEqual(linksOfHtml('<p>The text ](/not-a-link) is no link, but <a href="/real">this</a> is.</p>'), [
      'https://site.example/real',
    ]);
  });

  test('hand-written markdown keeps bare balanced parentheses in a target', () => {
    // Web fetch passes markdown through as it is.
    const text = 'See [Mercury](https://en.wikipedia.org/wiki/Mercury_(planet) "title") and [up](../up_(1)).';
    assert.deepEqual(linksInPage(text, PAGE_URL).sort(), [
      'https://en.wikipedia.org/wiki/Mercury_(planet)',
      'https://site.example/up_(1)',
    ]);
  });
});

describe('the scan is linear in its input', () => {
  test('a URL followed by 200,000 closing parentheses is found', async () => {
    assert.deepEqual(await scanWithinBound('urlsInText', `see https://a.example/${')'.repeat(LARGE)}`), [
      'https://a.example/',
    ]);
  });

  test('200,000 characters of unopened brackets and punctuation after a URL are walked back once', async () => {
    assert.deepEqual(await scanWithinBound('urlsInText', `https://a.example/(x)${'.)],'.repeat(LARGE / 4)}`), [
      'https://a.example/(x)',
    ]);
  });

  test('many URLs with trailing brackets in one large text are each found', async () => {
    const mention = 'https://b.example/))) ';
    const count = Math.floor(LARGE / mention.length);
    assert.deepEqual(
      await scanWithinBound('urlsInText', mention.repeat(count)),
      Array<string>(count).fill('https://b.example/'),
    );
  });

  test('200,000 characters of unclosed link targets, escapes and angle brackets are read in linear work', async () => {
    const pieces = ['](', '](<', '](a(', '](\\(', '\\](', '](  '];
    const text = pieces.map((piece) => piece.repeat(Math.floor(LARGE / pieces.length / piece.length))).join('\n');
    const links = await scanWithinBound('linksInPage', `${text} https://a.example/`, PAGE_URL);
    assert.ok(links.includes('https://a.example/'));
  });
});
