/**
 * An offline search engine over a folder of documents the operator chose (markdown, text,
 * HTML; see folder-document.ts for titles and URLs): a MiniSearch full-text index (BM25, titles
 * weighted up, prefix and light fuzzy matching), saved to a file so a restart does not read
 * every document again (index-file.ts).
 *
 * Keeping it current: a recursive `fs.watch` marks the index dirty on any change and refreshes
 * it in the background (debounced, so a burst of writes costs one pass). Before each query the
 * index is checked again when it is dirty, when no watcher runs (a platform or file system
 * without one, or `watch: false`), or when the last check is older than a minute (a safety net
 * for missed events, e.g. on network mounts). A check lists the folder and stats every file;
 * only files whose mtime or size changed are read again, and deleted ones leave the index.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import MiniSearch, { type Options, type SearchOptions as MiniSearchOptions } from 'minisearch';
import { HtmlConverter } from '../web-fetch/html-converter.js';
import { DOCUMENT_KINDS, readFolderDocument, type DocumentSource, type FolderDocument } from './folder-document.js';
import { loadIndexFile, saveIndexFile, type FileStamp, type IndexIdentity } from './index-file.js';
import { passageExcerpt } from './passage-excerpt.js';
import { SearchFailure, type SearchHit, type SearchOptions, type SearchProvider } from './search-provider.js';

export interface FolderProviderOptions {
  /** Absolute path of the folder to index. */
  folder: string;
  /** Documents without a URL of their own get `urlBase` + their relative path. */
  urlBase?: string | undefined;
  /** Absolute path of the saved index; default `.mms-search-index.json` in the folder. */
  indexFile?: string | undefined;
  /** Watch the folder for changes (default); false: check it before every query instead. */
  watch?: boolean | undefined;
}

export interface RefreshReport {
  added: number;
  changed: number;
  removed: number;
}

export const DEFAULT_INDEX_FILE_NAME = '.mms-search-index.json';

const INDEX_OPTIONS: Options<FolderDocument> = {
  idField: 'id',
  fields: ['title', 'text'],
  // The text is not stored: the index file stays small, and excerpts read the current file.
  storeFields: ['title', 'url', 'pageAge'],
};

const QUERY_OPTIONS: MiniSearchOptions = {
  boost: { title: 3 },
  combineWith: 'OR',
  // "otter" finds "otters"; short terms as prefixes would match too much.
  prefix: (term) => term.length >= 4,
  // One typo in a long word; short words stay exact.
  fuzzy: (term) => (term.length >= 6 ? 0.2 : false),
};

/** Larger files are left out: they are data dumps, not documents, and would dominate memory. */
const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
/** A query re-checks the folder when the last check is older than this, even with a watcher. */
const RECHECK_AFTER_MS = 60_000;
const WATCH_DEBOUNCE_MS = 200;
const SAVE_DELAY_MS = 1_000;
/** Documents read at once while indexing. */
const PARALLEL_FILES = 16;
/** Files stat'ed at once when checking the folder: the thread pool is busy, not the event loop. */
const PARALLEL_STATS = 256;
/**
 * HTML pages convert in one worker thread, started when the first one needs it: indexing and
 * excerpts wait their turn rather than take a second core from the requests. A page past the
 * limit is left out of the index (and of a search's hits) until it changes, as an unreadable
 * file is; web fetch's default limit, for pages of the same kind.
 */
const CONVERSION_WORKERS = 1;
const CONVERSION_TIME_LIMIT_MS = 30_000;

export class FolderSearchProvider implements SearchProvider {
  readonly name = 'folder';
  /** Documents read from disk to index them since start (not excerpts): for tests and benchmarks. */
  documentsRead = 0;
  /** What the last check of the folder found. */
  lastRefresh: RefreshReport | undefined;
  /** Why the index could not be saved, when it could not (a read-only folder): it then lives in memory only. */
  saveError: Error | undefined;

  private readonly source: DocumentSource;
  private readonly converter = new HtmlConverter({
    timeLimitMs: CONVERSION_TIME_LIMIT_MS,
    workers: CONVERSION_WORKERS,
  });
  /** Aborted by close: indexing stops converting, and what it had not recorded is read again next start. */
  private readonly stopping = new AbortController();
  private readonly indexFile: string;
  private readonly identity: IndexIdentity;
  private index = new MiniSearch<FolderDocument>(INDEX_OPTIONS);
  private manifest = new Map<string, FileStamp>();
  private loading: Promise<void> | undefined;
  private refreshing: Promise<RefreshReport> | undefined;
  private saving: Promise<void> = Promise.resolve();
  private dirty = true;
  private unsaved = false;
  private closed = false;
  private lastCheckMs = Number.NEGATIVE_INFINITY;
  private watcher: FSWatcher | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  private saveTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: FolderProviderOptions) {
    this.source = {
      folder: options.folder,
      urlBase: options.urlBase,
      convertHtml: (html, signal) => this.converter.convert(html, signal),
    };
    this.indexFile = options.indexFile ?? join(options.folder, DEFAULT_INDEX_FILE_NAME);
    this.identity = { folder: options.folder, urlBase: options.urlBase ?? null };
    // Index now, so that the first query does not wait for it; a failure is retried by that query.
    this.ready().catch(() => {});
  }

  get documentCount(): number {
    return this.index.documentCount;
  }

  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    try {
      // A first build of a large folder can outlast the tool's time limit: the search gives up
      // (unavailable), the build goes on, and a later search finds the index ready.
      await abortable(this.fresh(), options.signal);
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason ?? error;
      throw new SearchFailure('unavailable', `folder index of ${this.options.folder}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    options.signal.throwIfAborted();
    const results = this.index.search(query, {
      ...QUERY_OPTIONS,
      filter: (result) => options.accepts(String(result.url)),
    });
    const hits: SearchHit[] = [];
    for (const result of results) {
      if (hits.length >= options.maxResults) break;
      const stamp = this.manifest.get(String(result.id));
      let text: string;
      try {
        text = (await readFolderDocument(this.source, String(result.id), stamp?.mtimeMs ?? 0, options.signal)).text;
      } catch {
        // Deleted since the last check (the next check drops it from the index), or an HTML page
        // that no longer converts in time; or the search was given up, which the next line says.
        options.signal.throwIfAborted();
        continue;
      }
      hits.push({
        url: String(result.url),
        title: String(result.title),
        pageAge: typeof result.pageAge === 'string' ? result.pageAge : null,
        content: passageExcerpt(text, [...result.terms, ...result.queryTerms], options.maxCharacters),
      });
    }
    return hits;
  }

  /** Checks the folder now and applies what changed; concurrent calls share one pass. */
  refresh(): Promise<RefreshReport> {
    if (!this.refreshing) {
      this.refreshing = this.applyChanges().finally(() => {
        this.refreshing = undefined;
      });
    }
    return this.refreshing;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopping.abort(new Error('the folder index is closing'));
    this.watcher?.close();
    this.watcher = undefined;
    clearTimeout(this.watchTimer);
    clearTimeout(this.saveTimer);
    await this.loading?.catch(() => {});
    await this.refreshing?.catch(() => {});
    await Promise.all([this.save(), this.converter.close()]);
  }

  /** The first load (the saved index, then the changes since); retried after a failure. */
  private ready(): Promise<void> {
    if (!this.loading) {
      const loading = this.load();
      this.loading = loading;
      loading.catch(() => {
        if (this.loading === loading) this.loading = undefined;
      });
    }
    return this.loading;
  }

  private async load(): Promise<void> {
    const saved = await loadIndexFile(this.indexFile, this.identity, INDEX_OPTIONS);
    if (saved) {
      this.index = saved.index;
      this.manifest = saved.manifest;
    }
    // Watching first: a change made while the first pass runs then marks the index dirty.
    this.startWatching();
    await this.refresh();
  }

  private async fresh(): Promise<void> {
    await this.ready();
    // A pass already under way may have listed the folder before the latest change: wait, then judge.
    if (this.refreshing) await this.refreshing.catch(() => {});
    const stale = this.dirty || !this.watcher || performance.now() - this.lastCheckMs > RECHECK_AFTER_MS;
    if (stale) await this.refresh();
  }

  private async applyChanges(): Promise<RefreshReport> {
    // Cleared first: a change noticed while this pass runs marks the index dirty again.
    this.dirty = false;
    const started = performance.now();
    const onDisk = await listDocuments(this.options.folder);
    const report: RefreshReport = { added: 0, changed: 0, removed: 0 };
    for (const id of [...this.manifest.keys()]) {
      if (onDisk.has(id)) continue;
      if (this.index.has(id)) this.index.discard(id);
      this.manifest.delete(id);
      report.removed += 1;
    }
    const stale = [...onDisk].filter(([id, stamp]) => {
      const known = this.manifest.get(id);
      return !known || known.mtimeMs !== stamp.mtimeMs || known.size !== stamp.size;
    });
    for (let start = 0; start < stale.length; start += PARALLEL_FILES) {
      const batch = stale.slice(start, start + PARALLEL_FILES);
      const documents = await Promise.all(
        batch.map(([id, stamp]) =>
          readFolderDocument(this.source, id, stamp.mtimeMs, this.stopping.signal).catch(() => undefined),
        ),
      );
      // Closing stopped the conversions: those files failed for no fault of their own, so they
      // are not recorded as unreadable, and the next start reads them again.
      this.stopping.signal.throwIfAborted();
      batch.forEach(([id, stamp], position) => {
        const document = documents[position];
        if (this.manifest.has(id)) report.changed += 1;
        else report.added += 1;
        if (this.index.has(id)) this.index.discard(id);
        // An unreadable file (permissions, not UTF-8 text) is remembered by its stamp and tried
        // again only once it changes, rather than on every check.
        if (document) {
          this.index.add(document);
          this.documentsRead += 1;
        }
        this.manifest.set(id, stamp);
      });
    }
    this.lastCheckMs = started;
    this.lastRefresh = report;
    if (report.added + report.changed + report.removed > 0) this.scheduleSave();
    return report;
  }

  private startWatching(): void {
    if (this.options.watch === false || this.watcher || this.closed) return;
    try {
      this.watcher = watch(this.options.folder, { recursive: true, persistent: false }, (_event, name) =>
        this.noticeChange(name),
      );
      this.watcher.on('error', () => {
        // Watching stopped (the folder went away, too many watches): every query checks instead.
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      this.watcher = undefined;
    }
  }

  private noticeChange(name: string | null): void {
    // Dot files are never indexed, and the saved index is one: saving it is no change.
    if (name !== null && name.split(/[\\/]/).some((segment) => segment.startsWith('.'))) return;
    this.dirty = true;
    clearTimeout(this.watchTimer);
    this.watchTimer = setTimeout(() => {
      if (!this.closed) this.refresh().catch(() => {});
    }, WATCH_DEBOUNCE_MS).unref();
  }

  private scheduleSave(): void {
    this.unsaved = true;
    if (this.saveTimer || this.closed) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.save().catch(() => {});
    }, SAVE_DELAY_MS).unref();
  }

  /** Saves are chained: two never write the file at once. */
  private save(): Promise<void> {
    this.saving = this.saving.then(async () => {
      if (!this.unsaved) return;
      this.unsaved = false;
      try {
        await saveIndexFile(this.indexFile, this.identity, this.manifest, this.index);
        this.saveError = undefined;
      } catch (error) {
        this.saveError = error as Error;
      }
    });
    return this.saving;
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Every indexable file under `folder` with its stamp, by document id. Dot entries are skipped. */
async function listDocuments(folder: string): Promise<Map<string, FileStamp>> {
  const candidates: string[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const relative = pending.pop()!;
    let entries;
    try {
      entries = await readdir(join(folder, ...relative.split('/')), { withFileTypes: true });
    } catch (error) {
      if (relative === '') throw error; // the folder itself is missing: the provider is unavailable
      continue; // a subfolder removed during the walk
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const id = relative === '' ? entry.name : `${relative}/${entry.name}`;
      // Symbolic links are not followed: no cycles, and nothing outside the folder gets indexed.
      if (entry.isDirectory()) pending.push(id);
      else if (entry.isFile() && extname(entry.name).toLowerCase() in DOCUMENT_KINDS) candidates.push(id);
    }
  }
  const found = new Map<string, FileStamp>();
  for (let start = 0; start < candidates.length; start += PARALLEL_STATS) {
    const batch = candidates.slice(start, start + PARALLEL_STATS);
    const stats = await Promise.all(batch.map((id) => stat(join(folder, ...id.split('/'))).catch(() => undefined)));
    batch.forEach((id, position) => {
      const info = stats[position];
      if (info && info.size <= MAX_DOCUMENT_BYTES) found.set(id, { mtimeMs: info.mtimeMs, size: info.size });
    });
  }
  return found;
}
