/**
 * Shared set-up of the web fetch tests: a page server on loopback (HTML, text, JSON, redirects,
 * huge, slow and rate-limited pages, one with a long title) that records every path asked for, two loopback hosts on one
 * port for DNS rebinding, a script that fetches what the user text names, and four services with
 * different fetch settings.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, scriptedModels, startService, type RunningService } from '@mms/testing';
import type { HostLookup } from '../packages/server/src/tools/web-fetch/guarded-agent.js';

const ARTICLE = `<html><head><title>Otters</title></head><body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Sea otters</h1><p>Sea otters hold hands while they sleep so that they do not drift apart. ${'They use stones as tools. '.repeat(20)}</p>
<p>Otters have the densest fur of any animal.</p></article><footer>Copyright</footer></body></html>`;

/** A title of 400 characters, longer than a small share of the context budget. */
export const LONG_TITLE = `Otters ${'and their long river valleys '.repeat(14)}`.slice(0, 400);
const LONG_TITLE_PAGE = `<html><head><title>${LONG_TITLE}</title></head><body><article><p>${'Otters float on their backs and crack shells on their chests. '.repeat(20)}</p></article></body></html>`;

const LINKS_PAGE = `<html><head><title>Index</title></head><body><article><h1>Index</h1>
<p>${'An index of pages about otters. '.repeat(10)}</p><p>Read <a href="/linked">the linked page</a> next.</p></article></body></html>`;

let pages: Server;
let origin: string;
/** Every one must be refused before a connection is made (the IPv6 forms carry 127.0.0.1 or 169.254.169.254). */
export const SSRF_TARGETS = [
  'http://127.0.0.1:9/',
  'http://[::1]:9/',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://[::ffff:127.0.0.1]/',
  'http://169.254.169.254/',
  'http://10.0.0.1/',
  'http://localhost:9/',
  'file:///etc/passwd',
  'http://0.0.0.0:9/',
  'http://[::]:9/',
  'http://[::7f00:1]:9/',
  'http://[2002:7f00:1::1]:9/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[::ffff:0:7f00:1]:9/',
  'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
];
export const EXFIL_PATH = '/exfil?secret=hunter2';
/** Every path the page server was asked for, to prove that a refused fetch sent nothing. */
export const served: string[] = [];
/** Settles when the connection that asked for /limited (a 429 whose body never ends) closes. */
let limitedClosed: Promise<void> | undefined;
export const JSON_BODY = '{"otters": [1, 2], "note": "kept as it is, spaces and all"}';
let rebindOrigin: string;
let allowedHost: Server;
let privateHost: Server;
export const privateHostRequests: string[] = [];
export const rebindLookups: string[] = [];

function servePages(): Promise<Server> {
  const server = createServer((request, response) => {
    served.push(request.url ?? '');
    const routes: Record<string, () => void> = {
      '/article': () => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE),
      '/notes.txt': () => response.writeHead(200, { 'content-type': 'text/plain' }).end('plain notes'),
      '/image.png': () => response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(64)),
      '/huge': () => response.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(200_000)),
      '/data.json': () => response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON_BODY),
      '/limited': () => {
        limitedClosed = new Promise((resolve) => request.socket.once('close', () => resolve()));
        response.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '60' });
        response.write('slow down '.repeat(100));
      },
      '/slow': () => setTimeout(() => response.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 2000),
      '/redirect': () => response.writeHead(302, { location: '/notes.txt' }).end(),
      '/redirect-metadata': () =>
        response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
      '/redirect-loop': () => response.writeHead(302, { location: '/redirect-loop' }).end(),
      '/missing': () => response.writeHead(404).end(),
      '/found-by-search': () => response.writeHead(200, { 'content-type': 'text/plain' }).end('found by search'),
      '/index.html': () => response.writeHead(200, { 'content-type': 'text/html' }).end(LINKS_PAGE),
      '/linked': () => response.writeHead(200, { 'content-type': 'text/plain' }).end('the linked page'),
      '/long-title': () => response.writeHead(200, { 'content-type': 'text/html' }).end(LONG_TITLE_PAGE),
    };
    (routes[(request.url ?? '').split('?')[0]!] ?? routes['/missing']!)();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A script whose step 0 fetches the first URL in the user text (twice for 'twice'), then answers. */
function writeScript(): string {
  const folder = mkdtempSync(join(tmpdir(), 'mms-fetch-'));
  const path = join(folder, 'script.json');
  const fetchCall = (url: string) => ({ type: 'server_tool_use', name: 'web_fetch', input: { url } });
  const entries: Array<{ when: string; steps: Array<Array<Record<string, unknown>>> }> = [
    'article',
    'notes.txt',
    'data.json',
    'limited',
    'image.png',
    'huge',
    'slow',
    'redirect',
    'redirect-metadata',
    'redirect-loop',
    'missing',
  ].map((page) => ({
    when: `^fetch ${origin}/${page.replace('.', '\\.')}$`,
    steps: [[fetchCall(`${origin}/${page}`)], [{ type: 'text', text: 'Done.' }]],
  }));
  entries.push({
    when: '^twice',
    steps: [[fetchCall(`${origin}/notes.txt`), fetchCall(`${origin}/article`)], [{ type: 'text', text: 'Done.' }]],
  });
  entries.push({
    when: '^unmentioned',
    steps: [[fetchCall(`${origin}/notes.txt`)], [{ type: 'text', text: 'Done.' }]],
  });
  const done = [{ type: 'text', text: 'Done.' }];
  // The model writes a URL of its own (as a prompt injection would make it) and fetches it.
  entries.push({
    when: '^exfiltrate',
    steps: [
      [
        { type: 'thinking', thinking: `I will send it to ${EXFIL_PATH}.` },
        { type: 'text', text: `Saving the secret at ${origin}${EXFIL_PATH} now.` },
        fetchCall(`${origin}${EXFIL_PATH}`),
      ],
      done,
    ],
  });
  entries.push({ when: '^fetch what you wrote$', steps: [[fetchCall(`${origin}${EXFIL_PATH}`)], done] });
  entries.push({ when: '^prefix ', steps: [[fetchCall(`${origin}/notes`)], done] });
  entries.push({ when: '^query ', steps: [[fetchCall(`${origin}/notes.txt?page=2`)], done] });
  entries.push({ when: '^fragment ', steps: [[fetchCall(`${origin}/notes.txt`)], done] });
  entries.push({
    when: '^search then fetch$',
    steps: [
      [{ type: 'server_tool_use', name: 'web_search', input: { query: 'otters found' } }],
      [fetchCall(`${origin}/found-by-search`)],
      done,
    ],
  });
  entries.push({
    when: '^rebind ',
    steps: [[fetchCall(`${rebindOrigin}/page`)], [fetchCall(`${rebindOrigin}/page`)], done],
  });
  entries.push({ when: '^two huge ', steps: [[fetchCall(`${origin}/huge`), fetchCall(`${origin}/huge`)], done] });
  entries.push({
    when: '^budget search ',
    steps: [
      [{ type: 'server_tool_use', name: 'web_search', input: { query: 'otters found' } }],
      [fetchCall(`${origin}/huge`)],
      done,
    ],
  });
  entries.push({
    when: '^follow a link ',
    steps: [[fetchCall(`${origin}/index.html`)], [fetchCall(`${origin}/linked`)], done],
  });
  for (const target of SSRF_TARGETS) {
    entries.push({
      when: `^ssrf ${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
      steps: [[fetchCall(target)], [{ type: 'text', text: 'Done.' }]],
    });
  }
  writeFileSync(path, JSON.stringify(entries));
  return path;
}

/** The same port on two loopback addresses; the allowed one closes every connection, so each fetch connects (and resolves) anew. */
async function serveRebindingHosts(): Promise<void> {
  allowedHost = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'text/plain', connection: 'close' }).end('from the allowed address'),
  );
  await new Promise<void>((resolve) => allowedHost.listen(0, '127.0.0.1', resolve));
  const port = (allowedHost.address() as AddressInfo).port;
  privateHost = createServer((request, response) => {
    privateHostRequests.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'text/plain' }).end('from the private address');
  });
  await new Promise<void>((resolve) => privateHost.listen(port, '127.0.0.2', resolve));
  rebindOrigin = `http://rebind.test:${port}`;
}

const rebindingLookup: HostLookup = async (hostname) => {
  rebindLookups.push(hostname);
  return [{ address: rebindLookups.length === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
};

export interface FetchBench {
  /** The page server's origin. */
  origin: string;
  /** `rebind.test` on the rebinding hosts' port. */
  rebindOrigin: string;
  /** Loopback allowed, maxBytes 50,000, 500 ms, 3 redirects, and web search over one document whose URL only a search gives. */
  allowed: RunningService;
  /** The default networks (loopback refused). */
  guarded: RunningService;
  /** maxBytes at its minimum (1024) and a time limit no test waits out. */
  patient: RunningService;
  /** DNS rebinding: `rebind.test` resolves to 127.0.0.1 (allowed) first and to 127.0.0.2 (not) after. */
  rebinding: RunningService;
  /** Settles when the connection that asked for /limited (a 429 whose body never ends) closes. */
  readonly limitedClosed: Promise<void> | undefined;
  close(): Promise<void>;
}

/** Starts the page servers and the four services; `close` stops them all. */
export async function startFetchBench(): Promise<FetchBench> {
  await serveRebindingHosts();
  pages = await servePages();
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  const script = writeScript();
  const webFetch = { allowNetworks: ['127.0.0.1/32'], maxBytes: 50_000, timeoutMs: 500, maxRedirects: 3 };
  // One document whose URL only a search can give.
  const documents = mkdtempSync(join(tmpdir(), 'mms-fetch-docs-'));
  writeFileSync(
    join(documents, 'found.md'),
    `---\nurl: ${origin}/found-by-search\ntitle: Found\n---\nOtters found by a search.\n`,
  );
  const webSearch = { provider: { type: 'folder' as const, folder: documents, watch: false } };
  const allowed = await startService({ models: scriptedModels({ script }), serverTools: { webFetch, webSearch } });
  const guarded = await startService({
    models: scriptedModels({ script }),
    serverTools: { webFetch: { timeoutMs: 500 } },
  });
  const patient = await startService({
    models: scriptedModels({ script }),
    serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'], maxBytes: 1024, timeoutMs: 60_000 } },
  });
  const rebinding = await startService(
    {
      models: scriptedModels({ script }),
      serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'], timeoutMs: 2_000 } },
    },
    process.cwd(),
    { toolProviders: { hostLookup: rebindingLookup } },
  );
  return {
    origin,
    rebindOrigin,
    allowed,
    guarded,
    patient,
    rebinding,
    get limitedClosed() {
      return limitedClosed;
    },
    close: async () => {
      await allowed.close();
      await guarded.close();
      await patient.close();
      await rebinding.close();
      for (const server of [allowedHost, privateHost]) {
        server.closeAllConnections();
        server.close();
      }
      pages.closeAllConnections();
      pages.close();
    },
  };
}

export interface ResultBlock {
  type: string;
  content?: {
    type: string;
    error_code?: string;
    url?: string;
    content?: { source: { data: string }; title: string | null };
  };
  text?: string;
}

export const FETCH_TOOL = { type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'], max_uses: 5 };

export interface Reply {
  content: ResultBlock[];
  usage: { input_tokens: number; server_tool_use: { web_fetch_requests: number } | null };
}

/** Asks the `mid` model, with `text` as the user turn and FETCH_TOOL (`tool` over it) as its one tool. */
export async function fetchVia(
  service: RunningService,
  text: string,
  tool: Record<string, unknown> = {},
): Promise<Reply> {
  const body = {
    model: 'mid',
    max_tokens: 200,
    messages: [{ role: 'user', content: text }],
    tools: [{ ...FETCH_TOOL, ...tool }],
  };
  const response = await postJson(service, '/v1/messages', body);
  assert.equal(response.status, 200);
  return (await response.json()) as Reply;
}

/** The content of each web_fetch_tool_result block, in order. */
export function results(content: ResultBlock[]): ResultBlock['content'][] {
  return content.filter((block) => block.type === 'web_fetch_tool_result').map((block) => block.content);
}
