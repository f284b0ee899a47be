/**
 * A proxy on loopback in front of a service that records what a client sent through it (method,
 * URL, headers, status, JSON body), for tests and checks that drive a client they cannot
 * instrument, such as the Claude Code CLI (issue 34): what it asked, and what each request got.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  status: number;
  body: Record<string, unknown> | undefined;
}

export class RecordingProxy {
  readonly requests: ProxiedRequest[] = [];

  private constructor(private readonly server: Server) {}

  /** Starts a proxy to `target` (a base URL) on a free loopback port. */
  static async start(target: string): Promise<RecordingProxy> {
    const proxy: RecordingProxy = new RecordingProxy(
      createServer((incoming, outgoing) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          const url = new URL(incoming.url ?? '/', target);
          const forwarded = httpRequest(url, { method: incoming.method, headers: incoming.headers }, (answer) => {
            proxy.requests.push({
              method: incoming.method ?? 'GET',
              url: incoming.url ?? '/',
              headers: incoming.headers,
              status: answer.statusCode ?? 0,
              body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
            });
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(outgoing);
          });
          forwarded.end(text);
        });
      }),
    );
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get baseURL(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
