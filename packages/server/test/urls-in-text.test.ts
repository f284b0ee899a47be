/**
 * The URL scanner behind url_not_in_prior_context, without HTTP: URLs in prose, the links of a
 * page after its real conversion to markdown, and its work bounded by the input's length (a
 * request may be 32 MB).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { htmlToMarkdown } from '../src/tools/web-fetch/html-to-markdown.js';
import { linksInPage, urlsInText } from '../src/tools/web-fetch/urls-in-text.js';

/** Inputs of 200,000 characters: linear work finishes in moments, quadratic work in minutes. */
const LARGE = 200_000;
// The source through tsx, or its compiled form under plain node (`npm test`).
const SCANNER_MODULE = import.meta.resolve('../src/tools/web-fetch/urls-in-text.js');
const LOADER = SCANNER_MODULE.endsWith('.ts') ? ['--import', 'tsx'] : [];
/** Answers each line of stdin, a scan to run, with a line of stdout: its result. */
const CHILD_SCAN = `
import { createInterface } from 'node:readline';
const { urlsInText, linksInPage } = await import(${JSON.stringify(SCANNER_MODULE)});
for await (const line of createInterface({ input: process.stdin })) {
  const { scanner, text, pageUrl } = JSON.parse(line);
  const found = scanner === 'linksInPage' ? linksInPage(text, pageUrl) : urlsInText(text);
  process.stdout.write(JSON.stringify(found) + '\\n');
}
`;
type ScanChild = ChildProcessByStdio<Writable, Readable, null>;
/** A scan is given a minute; linear work takes a fraction of a second. */
const SCAN_BOUND_MS = 60_000;

/**
 * Runs the scans in a child process, one at a time, each within its bound. A quadratic scan of
 * these inputs runs for minutes and blocks the thread it runs on, where no test timeout can stop
 * it: only a separate process, killed at the bound, turns it into a failure rather than a hung
 * run. One child serves every scan (a start costs more than a scan); a scan past its bound kills
 * it, and the next scan starts a fresh one.
 */
class BoundedScanner {
  private child: ScanChild | undefined;
  private output = '';
  private pending: { resolve(line: string): void; reject(error: Error): void } | undefined;

  scan(scanner: 'urlsInText' | 'linksInPage', text: string, pageUrl = ''): Promise<string[]> {
    const child = this.child ?? this.start();
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        this.child = undefined;
        child.kill('SIGKILL');
        reject(new Error('the scan did not finish within its bound: its work is no longer linear in the input'));
      }, SCAN_BOUND_MS);
      this.pending = {
        resolve: (line) => (clearTimeout(timer), resolve(line)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      };
      child.stdin.write(`${JSON.stringify({ scanner, text, pageUrl })}\n`);
    }).then((line) => JSON.parse(line) as string[]);
  }

  close(): void {
    this.child?.stdin.end();
    this.child = undefined;
  }

  private start(): ScanChild {
    const child = spawn(process.execPath, [...LOADER, '--input-type=module', '-e', CHILD_SCAN], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.child = child;
    this.output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.output += chunk;
      const end = this.output.indexOf('\n');
      if (end < 0) return;
      const line = this.output.slice(0, end);
      this.output = this.output.slice(end + 1);
      const pending = this.pending;
      this.pending = undefined;
      pending?.resolve(line);
    });
    // A child killed at its bound, or closed, is no longer this.child: its end fails no scan.
    const lost = (error: Error) => {
      if (this.child !== child) return;
      this.child = undefined;
      const pending = this.pending;
      this.pending = undefined;
      pending?.reject(error);
    };
    child.on('error', lost);
    child.on('close', (code, signal) => lost(new Error(`the scan failed (exit code ${code}, signal ${signal})`)));
    return child;
  }
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
  const scanner = new BoundedScanner();
  after(() => scanner.close());
  const scanWithinBound = scanner.scan.bind(scanner);

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
