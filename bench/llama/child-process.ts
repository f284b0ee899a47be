/**
 * Bench children (the service, the direct engine) each get a process of their own, so that
 * neither shares an event loop, a heap or a garbage collector with the benchmark's client. A
 * child announces itself with one IPC message and exits when the IPC channel closes.
 */
import { fork, type ChildProcess, type Serializable } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export interface BenchChild {
  process: ChildProcess;
  /** The child's first message: what it tells the parent once it is ready. */
  ready: unknown;
  stop(): Promise<void>;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  // Closing the IPC channel asks the child to clean up and exit on its own.
  child.disconnect();
  await exited;
}

/** Forks `file` (relative to this folder) under tsx and waits for its first message. */
export async function startBenchChild(file: string, childArguments: string[]): Promise<BenchChild> {
  const path = fileURLToPath(new URL(file, import.meta.url));
  const child = fork(path, childArguments, { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const failed = once(child, 'exit').then(([code]) => {
    throw new Error(`${file} exited with code ${String(code)} before it was ready`);
  });
  const [ready] = await Promise.race([once(child, 'message'), failed]);
  failed.catch(() => undefined);
  return { process: child, ready, stop: () => stopChild(child) };
}

/** One request to a child that answers each message with exactly one message, in order. */
export async function askChild(child: BenchChild, request: Serializable): Promise<unknown> {
  // Aborted once answered, so that each request's listeners are removed again rather than piling up.
  const settled = new AbortController();
  const answered = once(child.process, 'message', { signal: settled.signal });
  const died = once(child.process, 'exit', { signal: settled.signal }).then(([code]) => {
    throw new Error(`a bench child exited with code ${String(code)} while answering ${JSON.stringify(request)}`);
  });
  answered.catch(() => undefined);
  died.catch(() => undefined);
  child.process.send(request);
  try {
    const [answer] = await Promise.race([answered, died]);
    return answer;
  } finally {
    settled.abort();
  }
}
