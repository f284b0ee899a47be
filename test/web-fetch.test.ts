/**
 * The web fetch server tool, run by the service: pages served on loopback (HTML, text, redirects,
 * huge and slow pages), an SSRF battery that must all be refused, and the tool's limits.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, scriptedModels, startService, type RunningService } from '@mms/testing';
import { parseMessageRequest, type MessageRequest } from '@mms/protocol';
import { AddressPolicy, embeddedIpv4, ipv6Words } from '../packages/server/src/tools/web-fetch/address-policy.js';
import type { HostLookup } from '../packages/server/src/tools/web-fetch/guarded-agent.js';
import { isInPriorContext, trustedUrls } from '../packages/server/src/tools/web-fetch/prior-context.js';

const ARTICLE = `<html><head><title>Otters</title></head><body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Sea otters</h1><p>Sea otters hold hands while they sleep so that they do not drift apart. ${'They use stones as tools. '.repeat(20)}</p>
<p>Otters have the densest fur of any animal.</p></article><footer>Copyright</footer></body></html>`;

const LINKS_PAGE = `<html><head><title>Index</title></head><body><article><h1>Index</h1>
<p>${'An index of pages about otters. '.repeat(10)}</p><p>Read <a href="/linked">the linked page</a> next.</p></article></body></html>`;

let pages: Server;
let origin: string;
/** Every one must be refused before a connection is made (the IPv6 forms carry 127.0.0.1 or 169.254.169.254). */
const SSRF_TARGETS = [
  'http://127.0.0.1:9/', 'http://[::1]:9/', 'http://2130706433/', 'http://0x7f.1/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/', 'http://10.0.0.1/',
  'http://localhost:9/', 'file:///etc/passwd', 'http://0.0.0.0:9/', 'http://[::]:9/', 'http://[::7f00:1]:9/', 'http://[2002:7f00:1::1]:9/', 'http://[64:ff9b::a9fe:a9fe]/',
  'http://[::ffff:0:7f00:1]:9/', 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
];
const EXFIL_PATH = '/exfil?secret=hunter2';
/** Every path the page server was asked for, to prove that a refused fetch sent nothing. */
const served: string[] = [];
let allowed: RunningService;
let guarded: RunningService;
/** maxBytes at its minimum (1024) and a time limit no test waits out. */
let patient: RunningService;
/** Settles when the connection that asked for /limited (a 429 whose body never ends) closes. */
let limitedClosed: Promise<void> | undefined;
const JSON_BODY = '{"otters": [1, 2], "note": "kept as it is, spaces and all"}';
/** DNS rebinding: `rebind.test` resolves to 127.0.0.1 (allowed) first and to 127.0.0.2 (not) after. */
let rebinding: RunningService;
let rebindOrigin: string;
let allowedHost: Server;
let privateHost: Server;
const privateHostRequests: string[] = [];
const rebindLookups: string[] = [];

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
      '/redirect-metadata': () => response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
      '/redirect-loop': () => response.writeHead(302, { location: '/redirect-loop' }).end(),
      '/missing': () => response.writeHead(404).end(),
      '/found-by-search': () => response.writeHead(200, { 'content-type': 'text/plain' }).end('found by search'),
      '/index.html': () => response.writeHead(200, { 'content-type': 'text/html' }).end(LINKS_PAGE),
      '/linked': () => response.writeHead(200, { 'content-type': 'text/plain' }).end('the linked page'),
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
  const entries: Array<{ when: string; steps: Array<Array<Record<string, unknown>>> }> = ['article', 'notes.txt', 'data.json', 'limited', 'image.png', 'huge', 'slow', 'redirect', 'redirect-metadata', 'redirect-loop', 'missing'].map((page) => ({
    when: `^fetch ${origin}/${page.replace('.', '\\.')}$`,
    steps: [[fetchCall(`${origin}/${page}`)], [{ type: 'text', text: 'Done.' }]],
  }));
  entries.push({ when: '^twice', steps: [[fetchCall(`${origin}/notes.txt`), fetchCall(`${origin}/article`)], [{ type: 'text', text: 'Done.' }]] });
  entries.push({ when: '^unmentioned', steps: [[fetchCall(`${origin}/notes.txt`)], [{ type: 'text', text: 'Done.' }]] });
  const done = [{ type: 'text', text: 'Done.' }];
  // The model writes a URL of its own (as a prompt injection would make it) and fetches it.
  entries.push({ when: '^exfiltrate', steps: [[{ type: 'thinking', thinking: `I will send it to ${EXFIL_PATH}.` }, { type: 'text', text: `Saving the secret at ${origin}${EXFIL_PATH} now.` }, fetchCall(`${origin}${EXFIL_PATH}`)], done] });
  entries.push({ when: '^fetch what you wrote$', steps: [[fetchCall(`${origin}${EXFIL_PATH}`)], done] });
  entries.push({ when: '^prefix ', steps: [[fetchCall(`${origin}/notes`)], done] });
  entries.push({ when: '^query ', steps: [[fetchCall(`${origin}/notes.txt?page=2`)], done] });
  entries.push({ when: '^fragment ', steps: [[fetchCall(`${origin}/notes.txt`)], done] });
  entries.push({ when: '^search then fetch$', steps: [[{ type: 'server_tool_use', name: 'web_search', input: { query: 'otters found' } }], [fetchCall(`${origin}/found-by-search`)], done] });
  entries.push({ when: '^rebind ', steps: [[fetchCall(`${rebindOrigin}/page`)], [fetchCall(`${rebindOrigin}/page`)], done] });
  entries.push({ when: '^two huge ', steps: [[fetchCall(`${origin}/huge`), fetchCall(`${origin}/huge`)], done] });
  entries.push({ when: '^budget search ', steps: [[{ type: 'server_tool_use', name: 'web_search', input: { query: 'otters found' } }], [fetchCall(`${origin}/huge`)], done] });
  entries.push({ when: '^follow a link ', steps: [[fetchCall(`${origin}/index.html`)], [fetchCall(`${origin}/linked`)], done] });
  for (const target of SSRF_TARGETS) {
    entries.push({ when: `^ssrf ${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, steps: [[fetchCall(target)], [{ type: 'text', text: 'Done.' }]] });
  }
  writeFileSync(path, JSON.stringify(entries));
  return path;
}

/** The same port on two loopback addresses; the allowed one closes every connection, so each fetch connects (and resolves) anew. */
async function serveRebindingHosts(): Promise<void> {
  allowedHost = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain', connection: 'close' }).end('from the allowed address'));
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

before(async () => {
  await serveRebindingHosts();
  pages = await servePages();
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  const script = writeScript();
  const webFetch = { allowNetworks: ['127.0.0.1/32'], maxBytes: 50_000, timeoutMs: 500, maxRedirects: 3 };
  // One document whose URL only a search can give.
  const documents = mkdtempSync(join(tmpdir(), 'mms-fetch-docs-'));
  writeFileSync(join(documents, 'found.md'), `---\nurl: ${origin}/found-by-search\ntitle: Found\n---\nOtters found by a search.\n`);
  const webSearch = { provider: { type: 'folder' as const, folder: documents, watch: false } };
  allowed = await startService({ models: scriptedModels({ script }), serverTools: { webFetch, webSearch } });
  guarded = await startService({ models: scriptedModels({ script }), serverTools: { webFetch: { timeoutMs: 500 } } });
  patient = await startService({ models: scriptedModels({ script }), serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'], maxBytes: 1024, timeoutMs: 60_000 } } });
  rebinding = await startService({ models: scriptedModels({ script }), serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'], timeoutMs: 2_000 } } }, process.cwd(), { toolProviders: { hostLookup: rebindingLookup } });
});
after(async () => {
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
});

interface ResultBlock {
  type: string;
  content?: { type: string; error_code?: string; url?: string; content?: { source: { data: string }; title: string | null } };
  text?: string;
}

const FETCH_TOOL = { type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'], max_uses: 5 };

interface Reply {
  content: ResultBlock[];
  usage: { input_tokens: number; server_tool_use: { web_fetch_requests: number } | null };
}

async function fetchVia(service: RunningService, text: string, tool: Record<string, unknown> = {}): Promise<Reply> {
  const body = { model: 'mid', max_tokens: 200, messages: [{ role: 'user', content: text }], tools: [{ ...FETCH_TOOL, ...tool }] };
  const response = await postJson(service, '/v1/messages', body);
  assert.equal(response.status, 200);
  return (await response.json()) as Reply;
}

function results(content: ResultBlock[]): ResultBlock['content'][] {
  return content.filter((block) => block.type === 'web_fetch_tool_result').map((block) => block.content);
}

describe('web fetch', () => {
  test('an HTML page comes back as readable markdown of its article, and the turn goes on', async () => {
    const reply = await fetchVia(allowed, `fetch ${origin}/article`);
    assert.deepEqual(reply.content.map((block) => block.type), ['server_tool_use', 'web_fetch_tool_result', 'text']);
    const [result] = results(reply.content);
    assert.equal(result?.type, 'web_fetch_result');
    assert.equal(result?.content?.title, 'Otters');
    assert.match(result?.content?.source.data ?? '', /# Sea otters/);
    assert.match(result?.content?.source.data ?? '', /hold hands while they sleep/);
    assert.doesNotMatch(result?.content?.source.data ?? '', /About|Copyright/);
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 1 });
  });

  test('plain text comes back as it is, after a redirect', async () => {
    const [result] = results((await fetchVia(allowed, `fetch ${origin}/redirect`)).content);
    assert.equal(result?.content?.source.data, 'plain notes');
    assert.equal(result?.url, `${origin}/notes.txt`);
  });

  const errors: Array<[string, string]> = [
    ['image.png', 'unsupported_content_type'],
    ['slow', 'url_not_accessible'],
    ['missing', 'url_not_accessible'],
    ['redirect-loop', 'url_not_accessible'],
    ['redirect-metadata', 'url_not_allowed'],
  ];
  for (const [page, code] of errors) {
    test(`/${page} is the ${code} error block`, async () => {
      const reply = await fetchVia(allowed, `fetch ${origin}/${page}`);
      assert.deepEqual(results(reply.content)[0], { type: 'web_fetch_tool_result_error', error_code: code });
      assert.equal(reply.content.at(-1)?.text, 'Done.');
    });
  }

  test('a huge page is cut at max_content_tokens (4 characters a token), and the text says it was cut', async () => {
    const [result] = results((await fetchVia(allowed, `fetch ${origin}/huge`, { max_content_tokens: 100 })).content);
    const data = result?.content?.source.data ?? '';
    assert.equal(data.length, 400);
    assert.match(data, /^x+\n\n\[Truncated: the page is longer than the 50000 bytes this service reads; its text goes on past the 400 characters this fetch may return\.\]$/);
  });

  test('a page past maxBytes is cut there, with a note, though the budget had room for more', async () => {
    const [result] = results((await fetchVia(patient, `fetch ${origin}/huge`, { max_content_tokens: 100_000 })).content);
    assert.equal(result?.content?.source.data, `${'x'.repeat(1024)}\n\n[Truncated: the page is longer than the 1024 bytes this service reads.]`);
  });

  test('a page that fits comes back whole, with no note', async () => {
    const [result] = results((await fetchVia(allowed, `fetch ${origin}/notes.txt`, { max_content_tokens: 100 })).content);
    assert.equal(result?.content?.source.data, 'plain notes');
  });

  test('JSON comes back as it is', async () => {
    const [result] = results((await fetchVia(allowed, `fetch ${origin}/data.json`)).content);
    assert.equal(result?.type, 'web_fetch_result');
    assert.equal(result?.content?.source.data, JSON_BODY);
  });

  test('a 429 is too_many_requests, and its body is dropped rather than left holding the connection', { timeout: 20_000 }, async () => {
    const [result] = results((await fetchVia(patient, `fetch ${origin}/limited`)).content);
    assert.deepEqual(result, { type: 'web_fetch_tool_result_error', error_code: 'too_many_requests' });
    // The body never ends and the service's time limit is a minute: only a destroyed body closes this now.
    await limitedClosed;
  });

  test('without max_content_tokens the input headroom is divided across the allowed fetches', async () => {
    const [result] = results((await fetchVia(allowed, `fetch ${origin}/huge`, { max_uses: 4 })).content);
    const length = result?.content?.source.data.length ?? 0;
    // Window 4096, max_tokens 200, a prompt of a few hundred tokens: under (4096 - 200) / 4 tokens each.
    assert.ok(length > 2000 && length <= ((4096 - 200) / 4) * 4, String(length));
  });

  test('past max_uses the call gets max_uses_exceeded and the model goes on', async () => {
    const reply = await fetchVia(allowed, `twice ${origin}/notes.txt ${origin}/article`, { max_uses: 1 });
    const [first, second] = results(reply.content);
    assert.equal(first?.type, 'web_fetch_result');
    assert.deepEqual(second, { type: 'web_fetch_tool_result_error', error_code: 'max_uses_exceeded' });
  });

  test('a URL the conversation never mentioned is url_not_in_prior_context', async () => {
    const [result] = results((await fetchVia(allowed, 'unmentioned')).content);
    assert.deepEqual(result, { type: 'web_fetch_tool_result_error', error_code: 'url_not_in_prior_context' });
  });
});

/** The test models' window is 4096 tokens and fetchVia asks for max_tokens 200: the rest, at 4 characters a token. */
function headroomCharacters(reply: Reply): number {
  return (4096 - reply.usage.input_tokens - 200) * 4;
}

describe('context budget of a turn', () => {
  const url = () => `${origin}/huge`;

  test('without max_uses, 5 fetches are assumed, and each gets its share of what earlier results left', async () => {
    const reply = await fetchVia(allowed, `two huge ${url()}`, { max_uses: undefined });
    const headroom = headroomCharacters(reply);
    const first = Math.floor(headroom / 5);
    const second = Math.floor((headroom - first) / 4);
    const [one, two] = results(reply.content);
    // A page's share holds its text, URL and title (a text/plain page has none).
    assert.equal(one?.content?.source.data.length, first - url().length);
    assert.equal(two?.content?.source.data.length, second - url().length);
  });

  test('search results are taken out of the headroom before the next fetch gets its share', async () => {
    const tools = [{ type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'], max_uses: 1 }, { ...FETCH_TOOL, max_uses: 2 }];
    const response = await postJson(allowed, '/v1/messages', { model: 'mid', max_tokens: 200, messages: [{ role: 'user', content: `budget search ${url()}` }], tools });
    const reply = (await response.json()) as Reply;
    const hits = reply.content.find((block) => block.type === 'web_search_tool_result')?.content as unknown as Array<{ url: string; title: string; page_age: string | null; encrypted_content: string }>;
    const searchCharacters = hits.reduce((sum, hit) => sum + hit.url.length + hit.title.length + (hit.page_age ?? '').length + Buffer.from(hit.encrypted_content.slice('mms1:'.length), 'base64url').toString('utf8').length, 0);
    assert.ok(searchCharacters > 0);
    // The search used its one call: the fetch's 2 calls share what the search left.
    const [page] = results(reply.content);
    assert.equal(page?.content?.source.data.length, Math.floor((headroomCharacters(reply) - searchCharacters) / 2) - url().length);
  });

  test('max_content_tokens is a cap within what is left: a page larger than the window fills it, and the next gets nothing', async () => {
    const reply = await fetchVia(allowed, `two huge ${url()}`, { max_content_tokens: 100_000 });
    const [one, two] = results(reply.content);
    assert.equal(one?.content?.source.data.length, headroomCharacters(reply) - url().length);
    assert.equal(two?.content?.source.data.length, 0);
  });
});

const NOT_IN_CONTEXT = { type: 'web_fetch_tool_result_error', error_code: 'url_not_in_prior_context' };

describe('url_not_in_prior_context', () => {
  test('a URL the model wrote itself (thinking, text, its own call) is refused, and nothing is sent to it', async () => {
    const reply = await fetchVia(allowed, 'exfiltrate the secret');
    assert.deepEqual(reply.content.map((block) => block.type), ['thinking', 'text', 'server_tool_use', 'web_fetch_tool_result', 'text']);
    assert.deepEqual(results(reply.content)[0], NOT_IN_CONTEXT);
    assert.deepEqual(served.filter((path) => path.startsWith('/exfil')), []);
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 0 });
  });

  test("a URL in an earlier assistant turn is the model's own too", async () => {
    const messages = [
      { role: 'user', content: 'plan it' },
      { role: 'assistant', content: [{ type: 'text', text: `I will store it at ${origin}${EXFIL_PATH}` }] },
      { role: 'user', content: 'fetch what you wrote' },
    ];
    const response = await postJson(allowed, '/v1/messages', { model: 'mid', max_tokens: 200, messages, tools: [FETCH_TOOL] });
    assert.equal(response.status, 200);
    assert.deepEqual(results(((await response.json()) as { content: ResultBlock[] }).content)[0], NOT_IN_CONTEXT);
    assert.deepEqual(served.filter((path) => path.startsWith('/exfil')), []);
  });

  test('a prefix of a mentioned URL is refused', async () => {
    assert.deepEqual(results((await fetchVia(allowed, `prefix ${origin}/notes.txt`)).content)[0], NOT_IN_CONTEXT);
  });

  test('a mentioned URL with a query string added is refused', async () => {
    assert.deepEqual(results((await fetchVia(allowed, `query ${origin}/notes.txt`)).content)[0], NOT_IN_CONTEXT);
  });

  test('the fragment is not part of the comparison', async () => {
    const [result] = results((await fetchVia(allowed, `fragment ${origin}/notes.txt#top.`)).content);
    assert.equal(result?.content?.source.data, 'plain notes');
  });

  test('a URL that only a web search result gave may be fetched', async () => {
    const search = { type: 'web_search_20260209', name: 'web_search', allowed_callers: ['direct'] };
    const response = await postJson(allowed, '/v1/messages', { model: 'mid', max_tokens: 200, messages: [{ role: 'user', content: 'search then fetch' }], tools: [search, FETCH_TOOL] });
    const reply = (await response.json()) as { content: ResultBlock[] };
    assert.deepEqual(reply.content.map((block) => block.type), ['server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_fetch_tool_result', 'text']);
    assert.equal(results(reply.content)[0]?.content?.source.data, 'found by search');
  });

  test('a link in a fetched page (relative in its HTML) may be fetched next', async () => {
    const [index, linked] = results((await fetchVia(allowed, `follow a link ${origin}/index.html`)).content);
    assert.match(index?.content?.source.data ?? '', /\[the linked page\]\(\/linked\)/);
    assert.equal(linked?.content?.source.data, 'the linked page');
  });

  describe('the comparison, without HTTP', () => {
    const request = (messages: unknown[], system?: unknown): MessageRequest =>
      parseMessageRequest({ model: 'm', max_tokens: 10, messages, ...(system === undefined ? {} : { system }) });
    const user = (content: unknown) => request([{ role: 'user', content }]);

    test('URLs are compared whole: no host or path prefix, scheme and host case do not matter', () => {
      const mentioned = user('see https://docs.example.com/guide/intro and http://Example.ORG:80/A');
      assert.equal(isInPriorContext('https://docs.example.com/guide/intro', mentioned, []), true);
      assert.equal(isInPriorContext('https://docs.example.co', mentioned, []), false);
      assert.equal(isInPriorContext('https://docs.example.com/guide', mentioned, []), false);
      assert.equal(isInPriorContext('https://docs.example.com/guide/intro/more', mentioned, []), false);
      assert.equal(isInPriorContext('HTTP://example.org/A#part', mentioned, []), true);
      assert.equal(isInPriorContext('http://example.org/a', mentioned, []), false, 'the path keeps its case');
    });

    test('prose punctuation around a URL is not part of it', () => {
      const mentioned = user('Read (https://a.example/x), then https://a.example/wiki/Otter_(animal).');
      assert.deepEqual([...trustedUrls(mentioned, [])], ['https://a.example/x', 'https://a.example/wiki/Otter_(animal)']);
    });

    test('the system prompt, client tool results and document URLs are trusted', () => {
      const conversation = request(
        [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { url: 'https://model.example/input' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'https://client.example/result' }] }, { type: 'document', source: { type: 'url', url: 'https://client.example/paper.pdf' } }] },
        ],
        'Sources: https://system.example/',
      );
      assert.deepEqual([...trustedUrls(conversation, [])].sort(), ['https://client.example/paper.pdf', 'https://client.example/result', 'https://system.example/']);
    });

    test("the model's blocks and code output are never trusted; search and fetch results are", () => {
      const turn = [
        { type: 'text', text: 'https://model.example/text' },
        { type: 'thinking', thinking: 'https://model.example/thinking', signature: '' },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'code_execution', input: { code: 'print("https://model.example/code")' } },
        { type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'code_execution_result', stdout: 'https://model.example/stdout\n', stderr: '', return_code: 0, content: [] } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_2', content: [{ type: 'web_search_result', url: 'https://search.example/hit', title: 't', page_age: null, encrypted_content: '' }] },
        { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_3', content: { type: 'web_fetch_result', url: 'https://fetch.example/page', content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'See [next](/next) and https://other.example/x.' }, title: null } } },
      ];
      assert.deepEqual([...trustedUrls(user('go'), turn)].sort(), ['https://fetch.example/next', 'https://fetch.example/page', 'https://other.example/x', 'https://search.example/hit']);
    });
  });
});

describe('SSRF guard', () => {
  test('loopback is refused without an explicit allow-list', async () => {
    const [result] = results((await fetchVia(guarded, `fetch ${origin}/notes.txt`)).content);
    assert.deepEqual(result, { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
  });

  for (const target of SSRF_TARGETS) {
    test(`${target} is refused`, async () => {
      const [result] = results((await fetchVia(guarded, `ssrf ${target}`)).content);
      assert.deepEqual(result, { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
    });
  }

  test('DNS rebinding: a name that resolved to an allowed address is checked again on the next connect, and refused', async () => {
    const reply = await fetchVia(rebinding, `rebind ${rebindOrigin}/page`);
    const [first, second] = results(reply.content);
    assert.equal(first?.content?.source.data, 'from the allowed address');
    assert.deepEqual(second, { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
    assert.deepEqual(rebindLookups, ['rebind.test', 'rebind.test'], 'each connection resolved the name');
    assert.deepEqual(privateHostRequests, []);
  });

  test('the address policy refuses every private, loopback, link-local, CGNAT and mapped form', () => {
    const policy = new AddressPolicy();
    const refused = ['127.0.0.1', '127.255.255.254', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '0.1.2.3', '224.0.0.1', '224.0.0.251', '255.255.255.255', '192.0.2.1', '198.18.0.1', '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd12:3456::1', 'ff02::1', 'ff05::fb', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a00:1', '::ffff:169.254.169.254'];
    // IPv6 forms that embed IPv4: IPv4-compatible ::/96, IPv4-translated ::ffff:0:0:0/96, 6to4, NAT64 (well-known and local-use), Teredo.
    const embedding = ['::7f00:1', '::127.0.0.1', '::a00:1', '::ffff:0:7f00:1', '::ffff:0:0', '2002:7f00:1::1', '2002:a9fe:a9fe::', '2002:c0a8:101::1', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::808:808', '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2'];
    // The rest of the IANA special-purpose ranges that are not globally reachable.
    const special = ['100::1', '100:0:0:1::1', '2001:2::1', '2001:10::1', '2001:db8::1', '3fff::1', '5f00::1', 'fec0::1'];
    for (const address of [...refused, ...embedding, ...special]) assert.equal(policy.permits(address), false, address);
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1', '64:ff9b::808:808', '64:ff9b::8.8.4.4']) assert.equal(policy.permits(address), true, address);
    assert.equal(policy.permits('not-an-ip'), false);
  });

  test('mapped IPv6 forms unwrap to their IPv4 address', () => {
    assert.equal(embeddedIpv4('::ffff:7f00:1'), '127.0.0.1');
    assert.equal(embeddedIpv4('[::ffff:a9fe:a9fe]'), '169.254.169.254');
    assert.equal(embeddedIpv4('64:ff9b::10.0.0.1'), '10.0.0.1');
    assert.equal(embeddedIpv4('2001:db8::1'), undefined);
    assert.equal(embeddedIpv4('2002:c000:204::1'), '192.0.2.4');
    assert.equal(embeddedIpv4('::ffff:0:7f00:1'), undefined, 'IPv4-translated is refused whole, not unwrapped');
    assert.deepEqual(ipv6Words('1::ffff:1.2.3.4'), [1, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
  });

  test('an explicit allow-list opens only the networks it names', () => {
    const policy = new AddressPolicy(['127.0.0.1/32']);
    assert.equal(policy.permits('127.0.0.1'), true);
    assert.equal(policy.permits('127.0.0.2'), false);
  });
});
