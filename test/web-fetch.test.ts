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
import { AddressPolicy, embeddedIpv4 } from '../packages/server/src/tools/web-fetch/address-policy.js';

const ARTICLE = `<html><head><title>Otters</title></head><body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Sea otters</h1><p>Sea otters hold hands while they sleep so that they do not drift apart. ${'They use stones as tools. '.repeat(20)}</p>
<p>Otters have the densest fur of any animal.</p></article><footer>Copyright</footer></body></html>`;

let pages: Server;
let origin: string;
let allowed: RunningService;
let guarded: RunningService;

function servePages(): Promise<Server> {
  const server = createServer((request, response) => {
    const routes: Record<string, () => void> = {
      '/article': () => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE),
      '/notes.txt': () => response.writeHead(200, { 'content-type': 'text/plain' }).end('plain notes'),
      '/image.png': () => response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(64)),
      '/huge': () => response.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(200_000)),
      '/slow': () => setTimeout(() => response.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 2000),
      '/redirect': () => response.writeHead(302, { location: '/notes.txt' }).end(),
      '/redirect-metadata': () => response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
      '/redirect-loop': () => response.writeHead(302, { location: '/redirect-loop' }).end(),
      '/missing': () => response.writeHead(404).end(),
    };
    (routes[request.url ?? ''] ?? routes['/missing']!)();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A script whose step 0 fetches the first URL in the user text (twice for 'twice'), then answers. */
function writeScript(): string {
  const folder = mkdtempSync(join(tmpdir(), 'mms-fetch-'));
  const path = join(folder, 'script.json');
  const fetchCall = (url: string) => ({ type: 'server_tool_use', name: 'web_fetch', input: { url } });
  const entries = ['article', 'notes.txt', 'image.png', 'huge', 'slow', 'redirect', 'redirect-metadata', 'redirect-loop', 'missing'].map((page) => ({
    when: `^fetch ${origin}/${page.replace('.', '\\.')}$`,
    steps: [[fetchCall(`${origin}/${page}`)], [{ type: 'text', text: 'Done.' }]],
  }));
  entries.push({ when: '^twice', steps: [[fetchCall(`${origin}/notes.txt`), fetchCall(`${origin}/article`)], [{ type: 'text', text: 'Done.' }]] });
  entries.push({ when: '^unmentioned', steps: [[fetchCall(`${origin}/notes.txt`)], [{ type: 'text', text: 'Done.' }]] });
  for (const target of ['http://127.0.0.1:9/', 'http://[::1]:9/', 'http://2130706433/', 'http://0x7f.1/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/', 'http://10.0.0.1/', 'http://localhost:9/', 'file:///etc/passwd']) {
    entries.push({ when: `^ssrf ${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, steps: [[fetchCall(target)], [{ type: 'text', text: 'Done.' }]] });
  }
  writeFileSync(path, JSON.stringify(entries));
  return path;
}

before(async () => {
  pages = await servePages();
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  const script = writeScript();
  const webFetch = { allowNetworks: ['127.0.0.1/32'], maxBytes: 50_000, timeoutMs: 500, maxRedirects: 3 };
  allowed = await startService({ models: scriptedModels({ script }), serverTools: { webFetch } });
  guarded = await startService({ models: scriptedModels({ script }), serverTools: { webFetch: { timeoutMs: 500 } } });
});
after(async () => {
  await allowed.close();
  await guarded.close();
  pages.closeAllConnections();
  pages.close();
});

interface ResultBlock {
  type: string;
  content?: { type: string; error_code?: string; url?: string; content?: { source: { data: string }; title: string | null } };
  text?: string;
}

async function fetchVia(service: RunningService, text: string, tool: Record<string, unknown> = {}): Promise<{ content: ResultBlock[]; usage: { server_tool_use: { web_fetch_requests: number } | null } }> {
  const body = { model: 'mid', max_tokens: 200, messages: [{ role: 'user', content: text }], tools: [{ type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'], max_uses: 5, ...tool }] };
  const response = await postJson(service, '/v1/messages', body);
  assert.equal(response.status, 200);
  return (await response.json()) as { content: ResultBlock[]; usage: { server_tool_use: { web_fetch_requests: number } | null } };
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

  test('a huge page is cut at max_content_tokens (4 characters a token)', async () => {
    const [result] = results((await fetchVia(allowed, `fetch ${origin}/huge`, { max_content_tokens: 100 })).content);
    assert.equal(result?.content?.source.data.length, 400);
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

describe('SSRF guard', () => {
  test('loopback is refused without an explicit allow-list', async () => {
    const [result] = results((await fetchVia(guarded, `fetch ${origin}/notes.txt`)).content);
    assert.deepEqual(result, { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
  });

  for (const target of ['http://127.0.0.1:9/', 'http://[::1]:9/', 'http://2130706433/', 'http://0x7f.1/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/', 'http://10.0.0.1/', 'http://localhost:9/', 'file:///etc/passwd']) {
    test(`${target} is refused`, async () => {
      const [result] = results((await fetchVia(guarded, `ssrf ${target}`)).content);
      assert.deepEqual(result, { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
    });
  }

  test('the address policy refuses every private, loopback, link-local, CGNAT and mapped form', () => {
    const policy = new AddressPolicy();
    const refused = ['127.0.0.1', '127.255.255.254', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a00:1', '::ffff:169.254.169.254'];
    for (const address of refused) assert.equal(policy.permits(address), false, address);
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.equal(policy.permits(address), true, address);
    assert.equal(policy.permits('not-an-ip'), false);
  });

  test('mapped IPv6 forms unwrap to their IPv4 address', () => {
    assert.equal(embeddedIpv4('::ffff:7f00:1'), '127.0.0.1');
    assert.equal(embeddedIpv4('[::ffff:a9fe:a9fe]'), '169.254.169.254');
    assert.equal(embeddedIpv4('64:ff9b::10.0.0.1'), '10.0.0.1');
    assert.equal(embeddedIpv4('2001:db8::1'), undefined);
  });

  test('an explicit allow-list opens only the networks it names', () => {
    const policy = new AddressPolicy(['127.0.0.1/32']);
    assert.equal(policy.permits('127.0.0.1'), true);
    assert.equal(policy.permits('127.0.0.2'), false);
  });
});
