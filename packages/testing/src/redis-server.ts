/**
 * A real `redis-server` for a test, on a free loopback port, in a temporary folder, with no
 * persistence, stopped (and its folder removed) by the test. `.ci/run` installs the binary where
 * it is missing; elsewhere the tests that need it skip, saying why (`redisServerMissing`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BINARY = 'redis-server';

/** Why the Redis tests cannot run here, or undefined when they can. */
export function redisServerMissing(): string | undefined {
  const probe = spawnSync(BINARY, ['--version'], { encoding: 'utf8' });
  if (probe.error === undefined && probe.status === 0) return undefined;
  return `${BINARY} is not installed (apt-get install redis-server; .ci/run installs it)`;
}

export interface RedisServer {
  url: string;
  port: number;
  /** Stops the server (SIGKILL: a crash, nothing saved) and waits until it is gone. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open, commands wait unanswered, as on a stalled host. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT): it answers what waited. */
  resume(): void;
  /** Stops it for good and removes its folder. */
  close(): Promise<void>;
}

export async function startRedisServer(): Promise<RedisServer> {
  const folder = mkdtempSync(join(tmpdir(), 'mms-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const started = spawn(
      BINARY,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', folder],
      { stdio: 'ignore' },
    );
    child = started;
    await waitForPort(port, started);
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    // A paused process takes its SIGKILL too.
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    start,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    close: async () => {
      await stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Until the port takes a connection: the server is up. Fails when the process exits first. */
async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`${BINARY} exited with ${child.exitCode} before listening`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${BINARY} did not listen on port ${port} within 5 s`);
}
