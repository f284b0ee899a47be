/**
 * HTML -> markdown in worker threads (html-converter.ts): the service answers other requests
 * while a large page converts, a conversion past its time limit is the url_not_accessible error
 * block, and an aborted conversion ends at once and frees its worker for the next page.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMessageRequest } from '@model-messages/protocol';
import { postJson, scriptedModels, startService, type RunningService } from '@model-messages/testing';
import { HtmlConverter } from '../packages/server/src/tools/web-fetch/html-converter.js';
import { WebFetchTool } from '../packages/server/src/tools/web-fetch/web-fetch-tool.js';
import { FETCH_TOOL, results, type Reply } from './web-fetch-support.js';

const article = (paragraphs: number) =>
  `<html><head><title>Big</title></head><body><article>${'<p>Otters <b>swim</b> and <a href="/x">dive</a> in rivers.</p>'.repeat(paragraphs)}</article></body></html>`;
/**
 * About 3.6 MB of article: some 7 s of conversion on a quiet core (about 2 s a megabyte), and
 * several times that on a busy machine, so that the bounds below (a few seconds, for a busy
 * machine) still tell an ended conversion from a whole one. It is never converted whole: the time
 * limit and the abort end it, so its size costs only its transfer.
 */
const BIG_PAGE = article(60_000);
/**
 * About 150 KB, converted whole while /health is asked: a fresh worker's start and its cold
 * conversion take a second or so, several times the 200 ms the test waits before asking.
 */
const CONVERTING_PAGE = article(2_500);
const SMALL_PAGE = `<html><head><title>Small</title></head><body><article><p>${'Otters hold hands while they sleep. '.repeat(20)}</p></article></body></html>`;

let pages: Server;
let origin: string;
/** Settles each time the page server has sent the whole of /converting. */
let convertingSent: Promise<void>;
let markConvertingSent: () => void;

function servePages(): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.url === '/big') return void response.writeHead(200, { 'content-type': 'text/html' }).end(BIG_PAGE);
    if (request.url === '/converting') {
      response.once('finish', () => markConvertingSent());
      return void response.writeHead(200, { 'content-type': 'text/html' }).end(CONVERTING_PAGE);
    }
    if (request.url === '/small') return void response.writeHead(200, { 'content-type': 'text/html' }).end(SMALL_PAGE);
    response.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function expectConvertingSent(): void {
  convertingSent = new Promise((resolve) => (markConvertingSent = resolve));
}

before(async () => {
  pages = await servePages();
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
});

after(() => {
  pages.closeAllConnections();
  pages.close();
});

describe('a large page converts off the event loop', () => {
  let service: RunningService;

  before(async () => {
    const script = join(mkdtempSync(join(tmpdir(), 'mms-convert-')), 'script.json');
    writeFileSync(
      script,
      JSON.stringify([
        {
          when: '^fetch converting',
          steps: [
            [{ type: 'server_tool_use', name: 'web_fetch', input: { url: `${origin}/converting` } }],
            [{ type: 'text', text: 'Done.' }],
          ],
        },
      ]),
    );
    service = await startService({
      models: scriptedModels({ script }),
      serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'], timeoutMs: 30_000, conversionTimeoutMs: 120_000 } },
    });
  });

  after(() => service.close());

  test('/health answers at once while the page converts', { timeout: 180_000 }, async () => {
    expectConvertingSent();
    let fetched = false;
    const reply = postJson(service, '/v1/messages', {
      model: 'mid',
      max_tokens: 100,
      messages: [{ role: 'user', content: `fetch converting ${origin}/converting` }],
      tools: [FETCH_TOOL],
    }).then(async (response) => {
      fetched = true;
      return (await response.json()) as Reply;
    });
    await convertingSent;
    // Past the download and the page handed to a worker: its start and the conversion take a
    // second or so from here.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const start = performance.now();
    const health = await fetch(`${service.baseURL}/health`);
    const healthMs = performance.now() - start;
    assert.equal(health.status, 200);
    assert.equal(fetched, false, 'the conversion was still going on');
    assert.ok(healthMs < 1_000, `/health took ${Math.round(healthMs)} ms`);
    const [page] = results((await reply).content);
    assert.equal(page?.type, 'web_fetch_result');
    assert.equal(page?.content?.title, 'Big');
  });
});

describe('time limit and abort', () => {
  const signal = new AbortController().signal;

  test(
    'a conversion past its time limit is the url_not_accessible error block; the next page converts in a fresh worker',
    { timeout: 60_000 },
    async () => {
      const tool = new WebFetchTool({
        allowNetworks: ['127.0.0.1/32'],
        maxBytes: 10 * 1024 * 1024,
        timeoutMs: 10_000,
        maxRedirects: 0,
        // Far below the big page's whole conversion, far above the small page's cold one in a fresh
        // worker (which at 100 ms failed on a busy machine).
        conversionTimeoutMs: 1_000,
      });
      const run = async (path: string) => {
        const url = `${origin}${path}`;
        const request = parseMessageRequest({
          model: 'mid',
          max_tokens: 10,
          messages: [{ role: 'user', content: `read ${url}` }],
          tools: [FETCH_TOOL],
        });
        return tool.run(
          { type: 'server_tool_use', id: 'srvtoolu_convert', name: 'web_fetch', input: { url } },
          { request, turnSoFar: [], resultCharacters: 40_000, signal },
        );
      };
      try {
        const start = performance.now();
        assert.deepEqual((await run('/big')).content, {
          type: 'web_fetch_tool_result_error',
          error_code: 'url_not_accessible',
        });
        assert.ok(performance.now() - start < 6_000, 'ended at its time limit, not when the conversion would have');
        const small = (await run('/small')).content as { type: string; content: { title: string } };
        assert.equal(small.type, 'web_fetch_result');
        assert.equal(small.content.title, 'Small');
      } finally {
        await tool.close();
      }
    },
  );

  test(
    'an aborted conversion ends at once and frees its worker for the page waiting behind it',
    { timeout: 60_000 },
    async () => {
      const converter = new HtmlConverter({ timeLimitMs: 120_000, workers: 1 });
      try {
        // The worker is started and warm before the clock matters.
        await converter.convert(SMALL_PAGE, signal);
        const abort = new AbortController();
        const big = converter.convert(BIG_PAGE, abort.signal);
        const waiting = converter.convert(SMALL_PAGE, signal);
        setTimeout(() => abort.abort(new Error('client went away')), 300);
        const start = performance.now();
        await assert.rejects(big, /client went away/);
        assert.ok(performance.now() - start < 4_000, 'rejected at the abort');
        // Behind the big page on the one worker: converted only because the abort ended it.
        const page = await waiting;
        assert.equal(page.title, 'Small');
        assert.ok(
          performance.now() - start < 8_000,
          `the waiting page took ${Math.round(performance.now() - start)} ms`,
        );
      } finally {
        await converter.close();
      }
    },
  );

  test('an abort while the page waits for a worker takes it out of the queue', async () => {
    const converter = new HtmlConverter({ timeLimitMs: 120_000, workers: 1 });
    try {
      const first = converter.convert(SMALL_PAGE, signal);
      const abort = new AbortController();
      const queued = converter.convert(SMALL_PAGE, abort.signal);
      abort.abort(new Error('gone'));
      await assert.rejects(queued, /gone/);
      assert.equal((await first).title, 'Small');
    } finally {
      await converter.close();
    }
  });
});
