/**
 * How the bench's servers that run as child processes (the fake engine, the floor, the bare
 * server) start and stop: listen on a free loopback port, tell the parent over IPC, and exit
 * once the channel closes. A normal exit (rather than a kill) lets `--cpu-prof` write its profile.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens and sends `{ port, ...details }` to the parent; `name` says who, if there is no parent. */
export function serveToParent(name: string, server: Server, details: Record<string, unknown> = {}): void {
  if (process.send === undefined) throw new Error(`${name} is started by a benchmark (it needs an IPC channel)`);
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as AddressInfo).port, ...details });
  });
  process.on('disconnect', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
