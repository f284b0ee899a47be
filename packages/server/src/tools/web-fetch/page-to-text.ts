/**
 * A fetched page as text a model can read: HTML as the markdown of its article
 * (html-to-markdown.ts, run off the event loop by html-converter.ts); plain text, markdown and
 * JSON as they are.
 */
import { FetchFailure, isReadableMediaType, mediaTypeOf, type FetchedPage } from './fetch-page.js';
import type { HtmlConverter } from './html-converter.js';
import type { PageText } from './html-to-markdown.js';

export type { PageText } from './html-to-markdown.js';

export async function pageToText(page: FetchedPage, converter: HtmlConverter, signal: AbortSignal): Promise<PageText> {
  const mediaType = mediaTypeOf(page.contentType);
  if (mediaType === 'text/html' || mediaType === 'application/xhtml+xml') return converter.convert(page.body, signal);
  if (isReadableMediaType(mediaType)) return { title: null, text: page.body };
  throw new FetchFailure('unsupported_content_type', `content type ${mediaType} is not supported`);
}
