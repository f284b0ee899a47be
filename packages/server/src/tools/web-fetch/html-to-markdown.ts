/**
 * HTML as text a model can read: Readability picks the article (not the navigation) and
 * Turndown writes it as markdown. It is synchronous and costs about 2 s a megabyte, so web fetch
 * runs it in a worker thread (html-converter.ts); the folder index calls it directly.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });

export interface PageText {
  title: string | null;
  text: string;
}

export function htmlToMarkdown(html: string): PageText {
  const { document } = parseHTML(html);
  const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
  const title = article?.title || document.title || null;
  const content = article?.content ?? document.body?.innerHTML ?? '';
  return { title, text: turndown.turndown(content).trim() };
}
