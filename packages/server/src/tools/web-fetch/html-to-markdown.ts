/**
 * HTML as text a model can read: Readability picks the article (not the navigation) and
 * Turndown writes it as markdown. It is synchronous and costs about 2 s a megabyte, so web fetch
 * runs it in a worker thread (html-converter.ts); the folder index calls it directly.
 */
import { Readability } from '@mozilla/readability';
// linkedom's one-file build: the same DOM as its main entry, which is some 200 modules (with its
// parser and selector engine) and costs 0.3 s of CPU to load, against 0.07 s for this. The
// conversion thread loads it at every start (html-converter.ts).
import { parseHTML } from 'linkedom/worker';
import TurndownService from 'turndown';

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });

export interface PageText {
  title: string | null;
  text: string;
}

type HtmlDocument = ReturnType<typeof parseHTML>['document'];
type HtmlNode = HtmlDocument['childNodes'][number];

export function htmlToMarkdown(html: string): PageText {
  const document = parseDocument(html);
  let article: ReturnType<Readability['parse']> = null;
  try {
    article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
  } catch {
    // Readability gave up on the page; its body text still reads.
  }
  if (article?.content)
    return { title: article.title || document.title || null, text: turndown.turndown(article.content).trim() };
  // No article found: the whole body, from a fresh parse, since Readability has already taken
  // the document apart. An empty page is an empty text, not an error.
  const whole = parseDocument(html);
  for (const element of whole.body.querySelectorAll('script, style, noscript, template')) element.remove();
  return { title: whole.title || null, text: turndown.turndown(whole.body.innerHTML).trim() };
}

/** Elements that, before any content, belong in the head when the page leaves out its tags. */
const HEAD_ELEMENTS = new Set(['BASE', 'LINK', 'META', 'NOSCRIPT', 'SCRIPT', 'STYLE', 'TEMPLATE', 'TITLE']);

/**
 * The page as a document with a head and a body. HTML5 lets a page leave out its `<html>`,
 * `<head>` and `<body>` tags (`<!DOCTYPE html><title>Otters</title><p>...` is valid), but
 * linkedom does not imply them as a browser would: the content ends up outside any body, where
 * Readability and the fallback read nothing, and a page with no element at all has no document
 * element, which Readability refuses. Such a page is laid out again into a full document, as the
 * HTML parsing rules would: head elements before the first content into the head, the rest, in
 * order, into the body.
 */
function parseDocument(html: string): HtmlDocument {
  const { document } = parseHTML(html);
  const root = document.documentElement;
  // Read the parsed children, not document.body: linkedom's getter adds an empty body.
  if (root?.tagName === 'HTML' && [...root.children].some((child) => child.tagName === 'BODY')) return document;
  const full = parseHTML('<!DOCTYPE html><html><head></head><body></body></html>').document;
  const { head, body } = full;
  const topLevel: HtmlNode[] = root?.tagName === 'HTML' ? [...root.childNodes] : [...document.childNodes];
  let inBody = false;
  for (const node of topLevel) {
    const tag = isElement(node) ? node.tagName : undefined;
    if (tag === 'HEAD') head.append(...node.childNodes);
    else if (!inBody && tag !== undefined && HEAD_ELEMENTS.has(tag)) head.append(node);
    // The doctype stays out; whitespace and comments before the content are not content.
    else if (
      node.nodeType === DOCUMENT_TYPE_NODE ||
      (!inBody && (node.nodeType === COMMENT_NODE || (node.nodeType === TEXT_NODE && !node.textContent?.trim())))
    )
      continue;
    else {
      inBody = true;
      body.append(node);
    }
  }
  if (root?.tagName === 'HTML')
    for (const attribute of root.attributes) full.documentElement.setAttribute(attribute.name, attribute.value);
  return full;
}

const TEXT_NODE = 3;
const COMMENT_NODE = 8;
const DOCUMENT_TYPE_NODE = 10;

function isElement(node: HtmlNode): node is HtmlNode & { tagName: string } {
  return node.nodeType === 1;
}
