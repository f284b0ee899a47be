/**
 * The runner the service ships: Python (pyodide) in a fresh child process per execution, taken
 * from a warm pool, with at most `maxConcurrent` executions at once. See sandbox-process.ts for
 * the walls around each child, and docs/decisions/0008-code-execution-sandbox.md for why.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CodeRunner, RunOptions, RunOutcome } from './code-runner.js';
import { ExecutionSlots } from './execution-slots.js';
import { makePythonSnapshot, type PythonSnapshot } from './python-snapshot.js';
import { chooseKernelMemoryLimit } from './kernel-memory-limit.js';
import type { SandboxPaths } from './sandbox-command.js';
import { sandboxPlatform } from './sandbox-platform.js';
import { defaultSnapshotFolder, openSnapshotCache, type SnapshotCache } from './snapshot-cache.js';
import { SandboxProcess, type SandboxLimits } from './sandbox-process.js';
import { WarmPool } from './warm-pool.js';

export interface ChildProcessRunnerOptions extends SandboxLimits {
  /**
   * A cgroup v2 folder delegated to the service, with the memory controller enabled for its
   * children, where each sandbox gets a cgroup whose memory.max is memoryMb (kernel-memory-limit.ts).
   */
  cgroupFolder?: string | undefined;
  /** Loaded sandboxes kept waiting; 0 starts one per execution (a cold start each time). */
  poolSize: number;
  /** Fill the pool when the runner is made rather than on the first execution. */
  warmAtStart: boolean;
  maxConcurrent: number;
  /** How long an execution waits for a slot before the answer is too_many_requests. */
  queueTimeoutMs: number;
  /** Where pyodide lives; the installed package unless given. */
  pyodideFolder?: string;
  /** false: every sandbox loads Python from scratch instead of from the snapshot (to measure what it saves). */
  useSnapshot?: boolean;
  /** Where the snapshot is kept between starts (snapshot-cache.ts); false: made for this runner alone. */
  snapshotFolder?: string | false | undefined;
}

export class ChildProcessRunner implements CodeRunner {
  private readonly slots: ExecutionSlots;
  private readonly paths: SandboxPaths;
  private pool: Promise<WarmPool> | undefined;
  private snapshot: PythonSnapshot | undefined;
  private readonly running = new Set<SandboxProcess>();
  private readonly closing = new AbortController();
  private readonly warned = new Set<string>();
  private closed = false;

  constructor(private readonly options: ChildProcessRunnerOptions) {
    this.slots = new ExecutionSlots(options.maxConcurrent, options.queueTimeoutMs);
    this.paths = {
      pyodideFolder: options.pyodideFolder ?? dirname(createRequire(import.meta.url).resolve('pyodide/package.json')),
      childScript: fileURLToPath(new URL('./sandbox-child.mjs', import.meta.url)),
    };
    if (options.warmAtStart) void this.warmPool().then((pool) => pool.fill());
  }

  async run(code: string, options: RunOptions): Promise<RunOutcome> {
    const asked = performance.now();
    if (this.closed) return { kind: 'unavailable', detail: 'the code runner is closed' };
    const slot = await this.slots.acquire(options.signal);
    if (!slot.granted)
      return slot.why === 'busy' ? { kind: 'busy' } : { kind: 'unavailable', detail: 'the request was cancelled' };
    try {
      const pool = await this.warmPool();
      if (this.closed) return { kind: 'unavailable', detail: 'the code runner is closed' };
      const { sandbox, warm } = pool.take();
      this.running.add(sandbox);
      try {
        try {
          await sandbox.ready;
        } catch (error) {
          const detail = (error as Error).message;
          this.warnOnce(detail);
          return { kind: 'unavailable', detail };
        }
        const waitMs = performance.now() - asked;
        const outcome = await sandbox.execute(code, options);
        return { ...outcome, timings: { ...outcome.timings, waitMs, warm } };
      } finally {
        this.running.delete(sandbox);
        void sandbox.dispose();
      }
    } finally {
      slot.release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    const running = [...this.running].map((sandbox) => sandbox.dispose());
    const pool = this.pool ? (await this.pool).close() : Promise.resolve();
    await Promise.all([...running, pool]);
    await this.snapshot?.remove();
  }

  /** The operator's only view of why executions answer `unavailable`: each distinct reason once. */
  private warnOnce(detail: string): void {
    if (this.closed || this.warned.has(detail)) return;
    this.warned.add(detail);
    process.emitWarning(`code execution unavailable: ${detail}`, { code: 'MMS_SANDBOX_UNAVAILABLE' });
  }

  private async snapshotCache(): Promise<SnapshotCache | undefined> {
    const folder = this.options.snapshotFolder;
    if (folder === false) return undefined;
    return openSnapshotCache(folder ?? defaultSnapshotFolder(), (detail) =>
      process.emitWarning(`code execution: ${detail}`, { code: 'MMS_SANDBOX_SNAPSHOT_FOLDER' }),
    );
  }

  /** The pool, made on first use: the platform probe, the Python snapshot and the kernel memory limit come first. */
  private warmPool(): Promise<WarmPool> {
    this.pool ??= (async () => {
      const platform = await sandboxPlatform();
      try {
        if (this.options.useSnapshot !== false)
          this.snapshot = await makePythonSnapshot(
            platform,
            this.options,
            this.paths,
            this.closing.signal,
            await this.snapshotCache(),
          );
      } catch (error) {
        // Sandboxes still work without it, each loading Python from scratch (seconds, not a fraction of one).
        if (!this.closed)
          process.emitWarning(
            `code execution: ${(error as Error).message}; sandboxes will load Python without a snapshot`,
            { code: 'MMS_SANDBOX_NO_SNAPSHOT' },
          );
      }
      const paths = this.snapshot ? { ...this.paths, snapshotFile: this.snapshot.file } : this.paths;
      const kernelMemory = await chooseKernelMemoryLimit(
        platform,
        this.options.memoryMb,
        this.options.cgroupFolder,
        () => new SandboxProcess(platform, this.options, paths),
      );
      return new WarmPool(this.options.poolSize, () => new SandboxProcess(platform, this.options, paths, kernelMemory));
    })();
    return this.pool;
  }
}
