/**
 * One file of the operator's search folder as a document: title, URL, page age and text.
 *
 * Which URL a document gets (the model cites it, and a later web_fetch may fetch it):
 *  1. the document's own: `url:` in a markdown file's front matter, or an HTML file's
 *     `<link rel="canonical" href="...">`, when it is an absolute http(s) URL;
 *  2. else `urlBase` from the config joined with the file's path relative to the folder
 *     (`urlBase` `https://docs.example.com/` + `guide/setup.md`), for a folder that is also
 *     served as a site;
 *  3. else the file's `file://` URL: still a stable citation, though web_fetch refuses it.
 *
 * Title: front matter `title:`, else the first `# heading` (markdown); the page's title (HTML);
 * the first line (text); else the file name. Page age: front matter `date:`, or the HTML's
 * published/modified meta, else the file's modification time, as a YYYY-MM-DD date.
 * HTML is turned into markdown by web fetch's html-to-markdown, so both tools read pages alike,
 * in a worker thread (`convertHtml`, the provider's HtmlConverter): a large page, indexed or
 * read again for a search's excerpt, would otherwise hold every other request for seconds.
 */
import { readFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PageText } from '../web-fetch/html-to-markdown.js';
import { readFrontMatter } from './front-matter.js';

/** Extensions the index reads, by kind. */
export const DOCUMENT_KINDS: Record<string, 'markdown' | 'text' | 'html'> = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.txt': 'text',
  '.html': 'html',
  '.htm': 'html',
};

export interface FolderDocument {
  /** The path relative to the folder, with `/` separators: the index's document id. */
  id: string;
  title: string;
  url: string;
  pageAge: string | null;
  text: string;
}

export interface DocumentSource {
  folder: string;
  urlBase: string | undefined;
  /** HTML to title and markdown, off the event loop (web-fetch/html-converter.ts). */
  convertHtml(html: string, signal: AbortSignal): Promise<PageText>;
}

/**
 * Reads and converts one document; `modifiedMs` is its mtime, the page age of last resort.
 * `signal` stops an HTML conversion (the search that wanted it gave up, or the service closes).
 */
export async function readFolderDocument(
  source: DocumentSource,
  id: string,
  modifiedMs: number,
  signal: AbortSignal,
): Promise<FolderDocument> {
  const path = join(source.folder, ...id.split('/'));
  const raw = await readFile(path, 'utf8');
  const kind = DOCUMENT_KINDS[extname(id).toLowerCase()] ?? 'text';
  const fallbackTitle = basename(id, extname(id));
  const parsed =
    kind === 'html'
      ? fromHtml(raw, await source.convertHtml(raw, signal))
      : kind === 'markdown'
        ? fromMarkdown(raw)
        : fromText(raw);
  return {
    id,
    title: parsed.title ?? fallbackTitle,
    url: absoluteHttpUrl(parsed.url) ?? urlFromBase(source.urlBase, id) ?? pathToFileURL(path).href,
    pageAge: isoDay(parsed.date) ?? isoDay(new Date(modifiedMs).toISOString()),
    text: parsed.text,
  };
}

interface ParsedDocument {
  title: string | undefined;
  url: string | undefined;
  date: string | undefined;
  text: string;
}

function fromMarkdown(raw: string): ParsedDocument {
  const { fields, body } = readFrontMatter(raw);
  const heading = /^#[ \t]+(.+?)[ \t#]*$/m.exec(body)?.[1];
  return {
    title: fields.title ?? heading,
    url: fields.url ?? fields.canonical_url,
    date: fields.date ?? fields.updated,
    text: body.trim(),
  };
}

function fromText(raw: string): ParsedDocument {
  const text = raw.replace(/^\uFEFF/, '').trim();
  const firstLine = text.split(/\r?\n/, 1)[0]?.trim();
  return { title: firstLine ? firstLine.slice(0, 200) : undefined, url: undefined, date: undefined, text };
}

function fromHtml(raw: string, { title, text }: PageText): ParsedDocument {
  return { title: title ?? undefined, url: canonicalLink(raw), date: metaDate(raw), text };
}

/** Attributes of each `<tag ...>` in the page, read without a DOM (the page is parsed once, by htmlToMarkdown). */
function tagAttributes(html: string, tag: string): Array<Record<string, string>> {
  const found: Array<Record<string, string>> = [];
  for (const match of html.matchAll(new RegExp(`<${tag}\\b([^>]*)>`, 'gi'))) {
    const attributes: Record<string, string> = {};
    for (const attribute of match[1]!.matchAll(/([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
      attributes[attribute[1]!.toLowerCase()] = attribute[2] ?? attribute[3] ?? attribute[4] ?? '';
    }
    found.push(attributes);
  }
  return found;
}

function canonicalLink(html: string): string | undefined {
  return tagAttributes(html, 'link').find((link) => (link.rel ?? '').toLowerCase().split(/\s+/).includes('canonical'))
    ?.href;
}

const DATE_META = [
  'article:modified_time',
  'article:published_time',
  'og:updated_time',
  'last-modified',
  'dcterms.modified',
  'dc.date',
  'date',
];

function metaDate(html: string): string | undefined {
  const metas = tagAttributes(html, 'meta');
  for (const name of DATE_META) {
    const meta = metas.find((candidate) => (candidate.property ?? candidate.name ?? '').toLowerCase() === name);
    if (meta?.content) return meta.content;
  }
  return undefined;
}

function absoluteHttpUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function urlFromBase(urlBase: string | undefined, id: string): string | undefined {
  if (!urlBase) return undefined;
  const base = urlBase.endsWith('/') ? urlBase : `${urlBase}/`;
  return new URL(id.split('/').map(encodeURIComponent).join('/'), base).href;
}

/** `2024-05-01T10:00:00Z`, `2024-05-01` or `May 1, 2024` as `2024-05-01`; anything else as it was written. */
function isoDay(value: string | undefined): string | null {
  if (!value) return null;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return value;
  // A bare date parses as UTC midnight; keep the day as written rather than shifting it by zone.
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return value;
  return new Date(time).toISOString().slice(0, 10);
}
