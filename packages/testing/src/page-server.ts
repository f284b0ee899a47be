/**
 * Loopback servers for the web fetch tests: a page server (HTML, text, JSON, an image,
 * redirects, huge, slow and rate-limited pages, one with a long title, a page of links) that
 * records every path asked for, and two hosts on one port with a lookup that moves a name from
 * the first to the second, for DNS rebinding.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HostLookup } from '@model-messages/server';

const ARTICLE = `<html><head><title>Otters</title></head><body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Sea otters</h1><p>Sea otters hold hands while they sleep so that they do not drift apart. ${'They use stones as tools. '.repeat(20)}</p>
<p>Otters have the densest fur of any animal.</p></article><footer>Copyright</footer></body></html>`;

/** A title of 400 characters, longer than a small share of the context budget. */
export const LONG_TITLE = `Otters ${'and their long river valleys '.repeat(14)}`.slice(0, 400);
const LONG_TITLE_PAGE = `<html><head><title>${LONG_TITLE}</title></head><body><article><p>${'Otters float on their backs and crack shells on their chests. '.repeat(20)}</p></article></body></html>`;

const LINKS_PAGE = `<html><head><title>Index</title></head><body><article><h1>Index</h1>
<p>${'An index of pages about otters. '.repeat(10)}</p><p>Read <a href="/linked">the linked page</a> next.</p></article></body></html>`;

/** The body of /data.json, spaces and all. */
export const JSON_BODY = '{"otters": [1, 2], "note": "kept as it is, spaces and all"}';

export interface PageServer {
  origin: string;
  /** Every path the page server was asked for, to prove that a refused fetch sent nothing. */
  served: string[];
  /** Settles when the connection that asked for /limited (a 429 whose body never ends) closes. */
  readonly limitedClosed: Promise<void> | undefined;
  close(): void;
}

/**
 * Serves /article, /notes.txt, /image.png, /huge (200,000 characters), /data.json, /limited (a
 * 429 whose body never ends), /slow (2 s), /redirect (to /notes.txt), /redirect-metadata (to
 * 169.254.169.254), /redirect-loop, /found-by-search, /index.html (links to /linked), /linked
 * and /long-title; any other path is a 404. A query string does not change the page.
 */
export async function startPageServer(): Promise<PageServer> {
  const served: string[] = [];
  let limitedClosed: Promise<void> | undefined;
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    get limitedClosed() {
      return limitedClosed;
    },
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

export interface RebindingHosts {
  /** `rebind.test` on the hosts' port. */
  origin: string;
  /** Resolves a name to 127.0.0.1 (the allowed host) the first time, and to 127.0.0.2 (the private one) after. */
  lookup: HostLookup;
  /** Every name `lookup` was asked for. */
  lookups: string[];
  /** Every path the private host was asked for. */
  privateHostRequests: string[];
  close(): void;
}

/** The same port on two loopback addresses; the allowed one closes every connection, so each fetch connects (and resolves) anew. */
export async function startRebindingHosts(): Promise<RebindingHosts> {
  const lookups: string[] = [];
  const privateHostRequests: string[] = [];
  const allowedHost = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'text/plain', connection: 'close' }).end('from the allowed address'),
  );
  await new Promise<void>((resolve) => allowedHost.listen(0, '127.0.0.1', resolve));
  const port = (allowedHost.address() as AddressInfo).port;
  const privateHost = createServer((request, response) => {
    privateHostRequests.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'text/plain' }).end('from the private address');
  });
  await new Promise<void>((resolve) => privateHost.listen(port, '127.0.0.2', resolve));
  return {
    origin: `http://rebind.test:${port}`,
    lookup: async (hostname) => {
      lookups.push(hostname);
      return [{ address: lookups.length === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    },
    lookups,
    privateHostRequests,
    close: () => {
      for (const server of [allowedHost, privateHost]) {
        server.closeAllConnections();
        server.close();
      }
    },
  };
}
