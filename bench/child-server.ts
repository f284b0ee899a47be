/**
 * How the bench's servers that run as child processes (the fake engine, the floor, the bare
 * server) start and stop: the child listens on a free loopback port, tells the parent over IPC,
 * and exits once the channel closes (a normal exit, rather than a kill, lets `--cpu-prof` write
 * its profile); the parent forks it with tsx, waits for its port, and closes the channel to stop it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
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

/** A child server as its parent holds it. */
export interface ForkedServer {
  port: number;
  pid: number;
  /** Everything the child said when it was ready, `port` included (the engine adds its `model`). */
  message: Record<string, unknown>;
  stop(): Promise<void>;
}

/** Forks `path` (a bench server file) with tsx and waits for its `{ port }`. */
export async function forkServer(name: string, path: string, childArguments: string[]): Promise<ForkedServer> {
  const child = fork(path, childArguments, { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const failed = once(child, 'exit').then(([code]) => {
    throw new Error(`${name} exited with code ${String(code)} before it was ready`);
  });
  const [message] = (await Promise.race([once(child, 'message'), failed])) as [unknown];
  failed.catch(() => undefined);
  const port = typeof message === 'object' && message !== null ? (message as { port?: unknown }).port : undefined;
  if (typeof port !== 'number') throw new Error(`expected { port } from ${name}, got ${JSON.stringify(message)}`);
  return { port, pid: child.pid!, message: message as Record<string, unknown>, stop: () => stopChild(child) };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  // Closing the IPC channel asks the child to exit on its own.
  if (child.connected) child.disconnect();
  else child.kill('SIGTERM');
  await exited;
}
