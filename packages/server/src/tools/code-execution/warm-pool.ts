/**
 * Sandboxes started ahead of need, so that an execution does not wait for pyodide to load
 * (seconds). Each sandbox serves one execution and is never returned: the pool hands it out
 * and starts a replacement in the background. With size 0 every execution starts its own.
 *
 * The pool fills on its first `take` (or at once with `fill`), so a service that never runs
 * code never pays for Python. A sandbox that dies while waiting leaves the pool, and a failed
 * start is not retried until the next `take`, so a broken host cannot make it spin.
 */
import type { SandboxProcess } from './sandbox-process.js';

export class WarmPool {
  private readonly waiting: SandboxProcess[] = [];
  private closed = false;
  /** A start is due on the next turn of the event loop (fill). */
  private fillScheduled = false;

  constructor(
    private readonly size: number,
    private readonly startSandbox: () => SandboxProcess,
  ) {}

  /**
   * A sandbox for one execution: a loaded one if the pool has it, else the one closest to
   * loaded (already starting), else a fresh one. `warm` says whether it had loaded already.
   */
  take(): { sandbox: SandboxProcess; warm: boolean } {
    if (this.closed) throw new Error('the sandbox pool is closed');
    const index = Math.max(
      0,
      this.waiting.findIndex((sandbox) => sandbox.isReady),
    );
    const [pooled] = this.waiting.splice(index, 1);
    const sandbox = pooled ?? this.startSandbox();
    const warm = pooled?.isReady ?? false;
    // A replacement loading beside a sandbox still loading would halve the CPU of the one an
    // execution is waiting for, so the refill waits for it.
    if (warm) this.fill();
    else
      sandbox.ready.then(
        () => this.fill(),
        () => {},
      );
    return { sandbox, warm };
  }

  /**
   * Starts sandboxes until the pool holds `size` of them, one per turn of the event loop:
   * starting a process holds the loop while the kernel copies the service's page tables (50 to
   * 76 ms each for a 300 MB service on the development VM), and four started at once after four
   * executions held it 300 ms.
   */
  fill(): void {
    if (this.fillScheduled || this.closed || this.waiting.length >= this.size) return;
    const sandbox = this.startSandbox();
    this.waiting.push(sandbox);
    const leave = () => {
      const index = this.waiting.indexOf(sandbox);
      if (index !== -1) this.waiting.splice(index, 1);
    };
    sandbox.ready.catch(leave);
    void sandbox.whenGone.then(leave);
    if (this.waiting.length >= this.size) return;
    this.fillScheduled = true;
    setImmediate(() => {
      this.fillScheduled = false;
      this.fill();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const sandboxes = this.waiting.splice(0);
    await Promise.all(sandboxes.map((sandbox) => sandbox.dispose()));
  }
}
