/**
 * A fetched page as text a model can read: HTML through Readability (the article, not the
 * navigation) and Turndown (markdown); plain text, markdown and JSON as they are.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { FetchFailure, isReadableMediaType, mediaTypeOf, type FetchedPage } from './fetch-page.js';

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });

export interface PageText {
  title: string | null;
  text: string;
}

export function pageToText(page: FetchedPage): PageText {
  const mediaType = mediaTypeOf(page.contentType);
  if (mediaType === 'text/html' || mediaType === 'application/xhtml+xml') return htmlToMarkdown(page.body);
  if (isReadableMediaType(mediaType)) return { title: null, text: page.body };
  throw new FetchFailure('unsupported_content_type', `content type ${mediaType} is not supported`);
}

function htmlToMarkdown(html: string): PageText {
  const { document } = parseHTML(html);
  const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
  const title = article?.title || document.title || null;
  const content = article?.content ?? document.body?.innerHTML ?? '';
  return { title, text: turndown.turndown(content).trim() };
}
