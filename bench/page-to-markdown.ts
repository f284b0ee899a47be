/**
 * Web fetch: HTML -> markdown time per 200 KB page next to the download itself (issue 4;
 * results in docs/benchmarks.md, "Web fetch: conversion vs download"):
 *
 *   1. download: the page through the tool's own path (guarded undici agent, byte cap) from a
 *      server in a child process on loopback, at full speed and throttled to 20 Mbit/s (a
 *      modest real link; loopback is far faster than any page a model would fetch);
 *   2. conversion: Readability + Turndown on the downloaded page (`pageToText`, in a warm worker
 *      thread as web fetch runs it: the time includes passing the page there and back).
 *
 *   node --import tsx bench/page-to-markdown.ts [--rounds 15]
 *
 * Medians over the rounds; the arms alternate within each round.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AddressPolicy } from '../packages/server/src/tools/web-fetch/address-policy.js';
import { fetchPage } from '../packages/server/src/tools/web-fetch/fetch-page.js';
import { guardedAgent } from '../packages/server/src/tools/web-fetch/guarded-agent.js';
import { HtmlConverter } from '../packages/server/src/tools/web-fetch/html-converter.js';
import { pageToText } from '../packages/server/src/tools/web-fetch/page-to-text.js';
import { median } from './statistics.js';

const PAGE_BYTES = 200 * 1024;
const THROTTLED_BYTES_PER_SECOND = (20 * 1_000_000) / 8;
const CHUNK_BYTES = 16 * 1024;

/** An article page as real sites make them: navigation, sidebars, scripts, and the text. */
function articlePage(): string {
  const navigation = `<nav>${Array.from({ length: 60 }, (_, index) => `<a href="/section/${index}">Section ${index}</a>`).join(' | ')}</nav>`;
  const sidebar = `<aside><ul>${Array.from({ length: 80 }, (_, index) => `<li><a href="/related/${index}">Related story number ${index} about otters</a></li>`).join('')}</ul></aside>`;
  const script = `<script>${'window.analytics = window.analytics || []; '.repeat(200)}</script>`;
  const paragraphs: string[] = [];
  for (let index = 0; paragraphs.join('').length < PAGE_BYTES * 0.7; index += 1) {
    paragraphs.push(
      `<h2>Part ${index}</h2><p>Sea otters spend most of their lives in the water, and ${'they rest, groom and eat while floating on their backs, holding stones as tools. '.repeat(6)}<a href="/notes/${index}">notes</a>.</p>`,
    );
    if (index % 5 === 0)
      paragraphs.push(
        `<table><tr><th>Year</th><th>Count</th></tr>${Array.from({ length: 8 }, (_, row) => `<tr><td>${2000 + row}</td><td>${row * 137}</td></tr>`).join('')}</table>`,
      );
  }
  let page = `<!doctype html><html><head><title>Sea otters</title>${script}</head><body>${navigation}${sidebar}<main><article><h1>Sea otters</h1>${paragraphs.join('')}</article></main><footer>Copyright</footer></body></html>`;
  if (page.length < PAGE_BYTES) page = page.replace('</footer>', `${' '.repeat(PAGE_BYTES - page.length)}</footer>`);
  return page.slice(0, PAGE_BYTES - 14) + '</body></html>';
}

/** The page server, run as this file's child: full speed on /page, throttled on /throttled. */
function servePages(): void {
  const page = Buffer.from(articlePage());
  const server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': page.length });
    if (request.url !== '/throttled') return void response.end(page);
    let offset = 0;
    const sendChunk = (): void => {
      response.write(page.subarray(offset, offset + CHUNK_BYTES));
      offset += CHUNK_BYTES;
      if (offset >= page.length) return void response.end();
      setTimeout(sendChunk, (CHUNK_BYTES / THROTTLED_BYTES_PER_SECOND) * 1000);
    };
    sendChunk();
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));
  process.on('disconnect', () => process.exit(0));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '15' } } });
  const rounds = Number(values.rounds);
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'] });
  const [{ port }] = (await once(child, 'message')) as [{ port: number }];
  const policy = new AddressPolicy(['127.0.0.1/32']);
  const agent = guardedAgent(policy, 30_000);
  const limits = { maxBytes: 10 * 1024 * 1024, maxRedirects: 3, timeoutMs: 30_000 };
  const download = async (path: string) => {
    const start = performance.now();
    const page = await fetchPage(
      new URL(`http://127.0.0.1:${port}${path}`),
      agent,
      policy,
      limits,
      new AbortController().signal,
    );
    return { page, milliseconds: performance.now() - start };
  };
  const samples = { loopback: [] as number[], throttled: [] as number[], conversion: [] as number[] };
  let markdownLength = 0;
  let pageLength = 0;
  const converter = new HtmlConverter({ timeLimitMs: 60_000, workers: 1 });
  const signal = new AbortController().signal;
  // The first page also starts the worker.
  await download('/page').then(({ page }) => pageToText(page, converter, signal));
  for (let round = 0; round < rounds; round += 1) {
    const fast = await download('/page');
    samples.loopback.push(fast.milliseconds);
    const start = performance.now();
    markdownLength = (await pageToText(fast.page, converter, signal)).text.length;
    samples.conversion.push(performance.now() - start);
    pageLength = fast.page.body.length;
    if (round < 5) samples.throttled.push((await download('/throttled')).milliseconds);
  }
  await agent.close();
  await converter.close();
  child.disconnect();
  const conversion = median(samples.conversion);
  console.log(
    `web fetch of a ${(pageLength / 1024).toFixed(0)} KB article page -> ${(markdownLength / 1024).toFixed(0)} KB of markdown, medians of ${rounds} rounds (throttled: 5)`,
  );
  console.log(`  download, loopback                  ${median(samples.loopback).toFixed(1)} ms`);
  console.log(`  download, 20 Mbit/s                 ${median(samples.throttled).toFixed(1)} ms`);
  console.log(`  HTML -> markdown (Readability+Turndown) ${conversion.toFixed(1)} ms`);
  console.log(`  conversion / loopback download      ${(conversion / median(samples.loopback)).toFixed(2)}`);
  console.log(`  conversion / 20 Mbit/s download     ${(conversion / median(samples.throttled)).toFixed(2)}`);
}

if (process.argv.includes('--serve')) servePages();
else await main();
