/**
 * Starts a worker thread on a module of this package, in the form the package runs in. The
 * package runs compiled (dist/, as installed: plain JavaScript) or from its TypeScript sources
 * through tsx (the tests, bench/, scripts/). Which one is read from the caller's own URL, so
 * that both find their thread the same way:
 * - compiled, the thread runs the module's `.js` beside the caller, as it is;
 * - from the sources, on Node 20 module hooks do not reach a worker (neither tsx's register()
 *   in the main thread nor `--import tsx` in the worker's execArgv: "Unknown file extension
 *   .ts"), so the thread starts in typescript-worker.mjs, which registers tsx in the thread and
 *   then imports the module's `.ts`.
 * The worker never inherits the parent's execArgv, so it loads the same way however the service
 * was started. Threads and child processes written in plain JavaScript (memory-watchdog-thread.mjs,
 * sandbox-child.mjs) need none of this: the build emits them beside the compiled modules as they
 * are (allowJs), so the same `new URL('./x.mjs', import.meta.url)` finds them in both forms.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The sources-only entry; the package build leaves it out (packages/server/tsconfig.build.json). */
const TYPESCRIPT_WORKER = new URL('./typescript-worker.mjs', import.meta.url);

/** `caller` is the starting module's import.meta.url; `name` the thread module's, without extension. */
export function startWorker(
  caller: string,
  name: string,
  options: Omit<WorkerOptions, 'execArgv' | 'argv'> = {},
): Worker {
  if (!new URL(caller).pathname.endsWith('.ts'))
    return new Worker(new URL(`./${name}.js`, caller), { ...options, execArgv: [] });
  return new Worker(TYPESCRIPT_WORKER, { ...options, execArgv: [], argv: [new URL(`./${name}.ts`, caller).href] });
}
