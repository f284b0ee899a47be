/**
 * The resident-memory watchdog of running sandboxes, in one worker thread for the service
 * (memory-watchdog-thread.mjs). On the main thread its reads of /proc waited behind whatever
 * held the event loop, a flood of messages or a big request, and a program grew to 2.9 GB
 * against a 512 MB limit meanwhile; a worker's loop is its own. It kills a sandbox over its
 * limit itself. It is the second line behind the kernel's limit (sandbox-memory.ts), which
 * holds even when no thread of the service gets the CPU, and the first for a program that
 * grows by small steps, since it acts on resident memory at the configured limit.
 */
import { Worker } from 'node:worker_threads';

const THREAD_ENTRY = new URL('./memory-watchdog-thread.mjs', import.meta.url);
/** An Int32 flag, padding, then two Float64s: resident kB and when (epoch ms) it was killed. */
const VERDICT_BYTES = 24;

export interface MemoryKill {
  residentKb: number;
  /** performance.now() of this thread when the watchdog killed it. */
  at: number;
}

/** One process under watch. */
export class MemoryWatch {
  private readonly flag: Int32Array;
  private readonly figures: Float64Array;

  constructor(
    private readonly id: number,
    verdict: SharedArrayBuffer,
    private readonly worker: Worker,
  ) {
    this.flag = new Int32Array(verdict, 0, 1);
    this.figures = new Float64Array(verdict, 8, 2);
  }

  /** The kill, if the watchdog made one. Read after the process is gone, it is final. */
  get kill(): MemoryKill | undefined {
    if (Atomics.load(this.flag, 0) === 0) return undefined;
    return { residentKb: this.figures[0]!, at: this.figures[1]! - performance.timeOrigin };
  }

  stop(): void {
    this.worker.postMessage({ type: 'unwatch', id: this.id });
  }
}

let worker: Worker | undefined;
let nextId = 0;

/**
 * Watches `pid` until stopped; above `limitKb` resident it is killed with SIGKILL, and
 * `launcherPid` (its namespace launcher, which is `pid` itself without one) with it.
 */
export function watchMemory(pid: number, launcherPid: number, limitKb: number): MemoryWatch {
  if (worker === undefined) {
    worker = new Worker(THREAD_ENTRY, { execArgv: [] });
    // The watchdog never keeps the service alive: with nothing to watch, it has nothing to do.
    worker.unref();
    worker.on('error', (error) => {
      process.emitWarning(`code execution: the memory watchdog thread failed: ${error.message}`, {
        code: 'MMS_SANDBOX_WATCHDOG_FAILED',
      });
      worker = undefined;
    });
  }
  nextId += 1;
  const verdict = new SharedArrayBuffer(VERDICT_BYTES);
  worker.postMessage({ type: 'watch', id: nextId, pid, launcherPid, limitKb, verdict });
  return new MemoryWatch(nextId, verdict, worker);
}
