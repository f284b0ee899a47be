/**
 * The body of a conversion worker (html-converter.ts): one HTML page in, its text out, one at a
 * time. It says `ready` once its modules are loaded, so that the start-up is not counted in the
 * first page's time limit.
 */
import { parentPort } from 'node:worker_threads';
import { htmlToMarkdown } from './html-to-markdown.js';

export type ConversionReply =
  { type: 'ready' } | { type: 'converted'; title: string | null; text: string } | { type: 'failed'; message: string };

const port = parentPort!;
port.on('message', (html: string) => {
  let reply: ConversionReply;
  try {
    reply = { type: 'converted', ...htmlToMarkdown(html) };
  } catch (error) {
    reply = { type: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
port.postMessage({ type: 'ready' } satisfies ConversionReply);
