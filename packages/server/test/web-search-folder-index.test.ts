/**
 * The web search folder index: ranking and passages, the saved index reused on restart (and
 * rebuilt when it is not to be trusted), changes and the watcher, domain filters inside the
 * index, a folder that appears later, the URL rule and excerpts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { documentsFolder, OTTERS_MD } from '@model-messages/testing';
import { DomainFilter } from '../src/tools/domain-filter.js';
import { readFolderDocument } from '../src/tools/web-search/folder-document.js';
import { DEFAULT_INDEX_FILE_NAME, FolderSearchProvider } from '../src/tools/web-search/folder-provider.js';
import { passageExcerpt } from '../src/tools/web-search/passage-excerpt.js';
import { SearchFailure } from '../src/tools/web-search/search-provider.js';
import { never } from './web-search-support.js';

/** For documents that are not HTML: no conversion is asked for. */
const noHtml = () => Promise.reject(new Error('only HTML is converted'));

/** Writes `text` and moves the mtime on, so that a change is seen even within one clock tick. */
function rewrite(path: string, text: string): void {
  writeFileSync(path, text);
  const later = new Date(Date.now() + 5_000);
  utimesSync(path, later, later);
}

describe('folder index', () => {
  describe('queries on one unchanged folder', () => {
    // Read-only tests share one provider: each provider starts its own conversion worker.
    let provider: FolderSearchProvider;
    before(() => {
      provider = new FolderSearchProvider({
        folder: documentsFolder(),
        urlBase: 'https://docs.example.com/kb/',
        watch: false,
      });
    });
    after(() => provider.close());

    test('ranks the document about the query first, with its title, URL, page age and the matching passage', async () => {
      const hits = await provider.search('sea otters', never());
      assert.equal(hits[0]?.title, 'Sea otters');
      assert.equal(hits[0]?.url, 'https://docs.example.com/kb/otters.md');
      assert.equal(hits[0]?.pageAge, '2024-05-01');
      assert.ok(
        hits.some((hit) => hit.url === 'https://docs.example.com/kb/beavers.txt'),
        'otter finds otters by prefix',
      );
      assert.ok(!hits.some((hit) => hit.title.includes('draft')), 'dot files are not indexed');

      const salmon = await provider.search('salmon spawn', never());
      assert.equal(salmon.length, 1);
      assert.equal(salmon[0]?.url, 'https://rivers.example.org/world', 'an HTML canonical link is the URL');
      assert.equal(salmon[0]?.title, 'Rivers of the world');
      assert.equal(salmon[0]?.pageAge, '2023-02-03');
      assert.match(salmon[0]?.content ?? '', /Salmon swim upstream/);
      assert.doesNotMatch(salmon[0]?.content ?? '', /Home \| About/, 'HTML goes through page-to-text (article only)');

      // A long document: the passages that matched, not its opening, within the budget.
      const [stones] = await provider.search('stones shells', { ...never(), maxCharacters: 300 });
      assert.ok((stones?.content.length ?? 0) <= 300);
      assert.match(stones?.content ?? '', /stones as tools/);
      assert.equal(provider.documentCount, 3);
    });

    test('the domain filter is applied inside the index, so a narrow allow-list still gets its results', async () => {
      const filter = DomainFilter.fromLists({ allowed_domains: ['rivers.example.org'] });
      const hits = await provider.search('sea', { ...never(), maxResults: 1, accepts: (url) => filter.permits(url) });
      assert.deepEqual(
        hits.map((hit) => hit.url),
        ['https://rivers.example.org/world'],
      );
    });
  });

  test('the saved index is reused on restart: no document is read again unless it changed', async () => {
    const folder = documentsFolder();
    const first = new FolderSearchProvider({ folder, watch: false });
    const before = await first.search('beavers dams', never());
    assert.equal(first.documentsRead, 3);
    await first.close();
    assert.ok(existsSync(join(folder, DEFAULT_INDEX_FILE_NAME)), 'closing saves the index');

    const second = new FolderSearchProvider({ folder, watch: false });
    assert.deepEqual(await second.search('beavers dams', never()), before);
    assert.equal(second.documentsRead, 0, 'the restart read the index file, not the documents');
    assert.equal(
      before[0]?.url,
      pathToFileURL(join(folder, 'beavers.txt')).href,
      'without urlBase a document has its file URL',
    );
    await second.close();

    // Changed while the service was down: only that file is read at the next start.
    rewrite(join(folder, 'beavers.txt'), 'Beavers\n\nBeavers build lodges of mud and sticks.\n');
    const third = new FolderSearchProvider({ folder, watch: false });
    assert.equal((await third.search('lodges', never()))[0]?.title, 'Beavers');
    assert.equal(third.documentsRead, 1);
    await third.close();
  });

  test('an index file from another folder or a damaged one is rebuilt, not trusted', async () => {
    const folder = documentsFolder();
    const indexFile = join(mkdtempSync(join(tmpdir(), 'mms-search-index-')), 'index.json');
    const first = new FolderSearchProvider({ folder, indexFile, watch: false });
    await first.search('otters', never());
    await first.close();

    const other = documentsFolder();
    const second = new FolderSearchProvider({ folder: other, indexFile, watch: false });
    assert.equal((await second.search('otters', never()))[0]?.url, pathToFileURL(join(other, 'otters.md')).href);
    assert.equal(second.documentsRead, 3);
    await second.close();

    writeFileSync(indexFile, '{"format": "mms-folder-search-index", "version": 1, "folder"');
    const third = new FolderSearchProvider({ folder, indexFile, watch: false });
    assert.equal((await third.search('otters', never()))[0]?.title, 'Sea otters');
    assert.equal(third.documentsRead, 3);
    await third.close();
  });

  test('a changed, an added and a deleted file are reflected by the next query', async () => {
    const folder = documentsFolder();
    const provider = new FolderSearchProvider({ folder, watch: false });
    try {
      assert.deepEqual(await provider.search('walrus', never()), []);
      rewrite(join(folder, 'beavers.txt'), 'Beavers\n\nA walrus once visited the beaver pond.\n');
      assert.equal((await provider.search('walrus', never()))[0]?.title, 'Beavers', 'changed');

      writeFileSync(join(folder, 'geography', 'glaciers.md'), '# Glaciers\n\nGlaciers carve valleys.\n');
      assert.equal((await provider.search('glaciers valleys', never()))[0]?.title, 'Glaciers', 'added');

      rmSync(join(folder, 'otters.md'));
      const otters = await provider.search('sea otters', never());
      assert.ok(!otters.some((hit) => hit.title === 'Sea otters'), 'deleted');
      assert.deepEqual(provider.lastRefresh, { added: 0, changed: 0, removed: 1 });
    } finally {
      await provider.close();
    }
  });

  test('with the watcher on, a file added to a new subfolder is found', async () => {
    const folder = documentsFolder();
    const provider = new FolderSearchProvider({ folder });
    try {
      await provider.search('otters', never());
      mkdirSync(join(folder, 'new'));
      writeFileSync(join(folder, 'new', 'narwhals.md'), '# Narwhals\n\nNarwhals have one long tusk.\n');
      // The watcher's event arrives on its own schedule: wait for the result, within a generous bound.
      const deadline = Date.now() + 10_000;
      let found = false;
      while (!found && Date.now() < deadline) {
        found = (await provider.search('narwhals tusk', never())).some((hit) => hit.title === 'Narwhals');
        if (!found) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(found);
    } finally {
      await provider.close();
    }
  });

  test('a folder that does not exist is unavailable, and found once it appears', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'mms-search-missing-')), 'docs');
    const provider = new FolderSearchProvider({ folder, watch: false });
    try {
      await assert.rejects(
        provider.search('otters', never()),
        (error: unknown) => error instanceof SearchFailure && error.errorCode === 'unavailable',
      );
      mkdirSync(folder);
      writeFileSync(join(folder, 'otters.md'), OTTERS_MD);
      assert.equal((await provider.search('otters', never()))[0]?.title, 'Sea otters');
    } finally {
      await provider.close();
    }
  });

  test('URL rule: front matter url, then urlBase + path, then the file URL', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'mms-search-url-'));
    mkdirSync(join(folder, 'a b'));
    writeFileSync(join(folder, 'a b', 'own.md'), '---\nurl: "https://own.example.com/page"\ntitle: Own\n---\nBody');
    writeFileSync(join(folder, 'a b', 'plain.md'), 'No front matter, no heading.');
    const own = await readFolderDocument(
      { folder, urlBase: 'https://base.example.com/docs', convertHtml: noHtml },
      'a b/own.md',
      0,
      new AbortController().signal,
    );
    assert.equal(own.url, 'https://own.example.com/page');
    assert.equal(own.title, 'Own');
    const based = await readFolderDocument(
      { folder, urlBase: 'https://base.example.com/docs', convertHtml: noHtml },
      'a b/plain.md',
      Date.parse('2025-03-04T12:00:00Z'),
      new AbortController().signal,
    );
    assert.equal(based.url, 'https://base.example.com/docs/a%20b/plain.md');
    assert.equal(based.title, 'plain');
    assert.equal(based.pageAge, '2025-03-04');
    const bare = await readFolderDocument(
      { folder, urlBase: undefined, convertHtml: noHtml },
      'a b/plain.md',
      0,
      new AbortController().signal,
    );
    assert.equal(bare.url, pathToFileURL(join(folder, 'a b', 'plain.md')).href);
  });

  test('an excerpt keeps the paragraphs with the most query terms, in document order', () => {
    const text = [
      'Intro about nothing.',
      'Otters eat crabs.',
      'Filler '.repeat(50),
      'Otters and crabs and urchins.',
    ].join('\n\n');
    const excerpt = passageExcerpt(text, ['otters', 'crabs', 'urchins'], 80);
    assert.equal(excerpt, 'Otters eat crabs.\n\n[...]\n\nOtters and crabs and urchins.');
    assert.equal(passageExcerpt('short', ['x'], 80), 'short');
  });
});

describe('HTML converts off the event loop', () => {
  /**
   * About 60 KB of article: on the main thread, a conversion of half a second or more (a fresh
   * worker converts it cold), against milliseconds of the search's own main-thread work (reading,
   * indexing, excerpting), so that a stall would measure the conversion. A larger page only makes
   * the test slower: the check is relative.
   */
  const bigPage = `<html><head><title>Big</title></head><body><article>${'<p>Otters <b>swim</b> and <a href="/x">dive</a> in rivers.</p>'.repeat(1_000)}</article></body></html>`;

  test(
    'indexing a large HTML page and excerpting it for a search leave the event loop free',
    { timeout: 120_000 },
    async () => {
      const folder = mkdtempSync(join(tmpdir(), 'mms-search-big-'));
      writeFileSync(join(folder, 'big.html'), bigPage);
      let longestGapMs = 0;
      let last = performance.now();
      const ticker = setInterval(() => {
        const now = performance.now();
        longestGapMs = Math.max(longestGapMs, now - last);
        last = now;
      }, 5);
      const provider = new FolderSearchProvider({ folder, watch: false });
      try {
        const started = performance.now();
        const hits = await provider.search('otters dive', never());
        const elapsedMs = performance.now() - started;
        assert.equal(hits[0]?.title, 'Big');
        assert.match(hits[0]?.content ?? '', /Otters \*\*swim\*\* and/);
        // Relative, not absolute, so that it holds on any machine: on the main thread the longest
        // stall is a whole conversion (the search converts twice: to index, then to excerpt).
        assert.ok(
          longestGapMs < elapsedMs / 5,
          `the event loop stalled ${Math.round(longestGapMs)} ms of a ${Math.round(elapsedMs)} ms search`,
        );
      } finally {
        clearInterval(ticker);
        await provider.close();
      }
    },
  );

  test(
    'closing during indexing stops the conversion, and the page is indexed on the next start',
    { timeout: 120_000 },
    async () => {
      const folder = mkdtempSync(join(tmpdir(), 'mms-search-closing-'));
      // Any page will do: closing comes before the page is read, so its conversion is refused
      // at once rather than cut short, and the next start converts it whole.
      const page = `<html><head><title>Big</title></head><body><article>${'<p>Otters <b>swim</b> and <a href="/x">dive</a> in rivers.</p>'.repeat(20)}</article></body></html>`;
      writeFileSync(join(folder, 'big.html'), page);
      // The constructor starts indexing; closing at once stops it before the page reaches a worker.
      const first = new FolderSearchProvider({ folder, watch: false });
      await first.close();
      assert.equal(first.documentsRead, 0, 'closing waited for the conversion instead of stopping it');
      const second = new FolderSearchProvider({ folder, watch: false });
      try {
        const hits = await second.search('otters dive', never());
        assert.equal(hits[0]?.title, 'Big', 'not remembered as unreadable');
      } finally {
        await second.close();
      }
    },
  );
});
