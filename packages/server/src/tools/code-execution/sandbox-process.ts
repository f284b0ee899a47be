/**
 * One sandbox: a child Node process with pyodide loaded, used for exactly one execution and
 * then gone. Code in pyodide can reach this child's JavaScript (`import js`), so the walls are
 * the process's, set up here:
 * - its own network and PID namespaces, and the `nobody` user when the service is root
 *   (sandbox-platform.ts);
 * - Node's permission flags: it may read only pyodide, its own script and the Python snapshot,
 *   read and write only its working folder, and may not start processes or workers or load
 *   native addons (sandbox-command.ts);
 * - an empty environment, so no secret of the service's is there to read;
 * - kernel limits through prlimit (CPU time, file size, no core dumps), a deadline on the
 *   sandbox's own running time, an overall wall-clock limit that counts host function calls
 *   too, and a watch on the working folder's size (folder-usage.ts);
 * - memory bounded by the kernel, by a cgroup of its own or else by its address space
 *   (kernel-memory-limit.ts), and by a resident-memory watchdog off the main thread
 *   (memory-watchdog.ts);
 * - stdout and stderr cut at a cap, and a message channel that treats every message as hostile
 *   (message-lines.ts, host-calls.ts, answer-writer.ts): anything honest code would not send is
 *   a breach, which kills the sandbox at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { constants as osConstants, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { AnswerWriter } from './answer-writer.js';
import { CappedOutput } from './capped-output.js';
import { folderUsage, isOver, MAX_FOLDER_ENTRIES } from './folder-usage.js';
import type { KillReason, RunOptions } from './code-runner.js';
import { HostCalls, MAX_CALLS_IN_FLIGHT, MAX_MESSAGE_BYTES } from './host-calls.js';
import type { KernelMemoryLimit } from './kernel-memory-limit.js';
import { watchMemory, type MemoryWatch } from './memory-watchdog.js';
import { MessageLines } from './message-lines.js';
import { PausableDeadline } from './pausable-deadline.js';
import { SandboxCgroup } from './sandbox-cgroup.js';
import {
  describeStartFailure,
  killSandbox,
  sandboxCommand,
  sandboxSpawnOptions,
  type SandboxMemory,
  type SandboxPaths,
} from './sandbox-command.js';
import type { SandboxPlatform } from './sandbox-platform.js';

/** The overall wall-clock limit, when the config leaves it unset, in multiples of timeoutMs. */
export const WALL_CLOCK_MULTIPLE = 3;

export interface SandboxLimits {
  /** The sandbox's own running time per execution (host function calls not counted). */
  timeoutMs: number;
  /**
   * The whole execution, host function calls included; WALL_CLOCK_MULTIPLE x timeoutMs when
   * unset. timeoutMs alone would let code that keeps a slow search or fetch in flight run
   * for as long as max_uses and maxHostCalls allow.
   */
  wallTimeoutMs?: number | undefined;
  /** Resident memory of the child; above it the child is killed. */
  memoryMb: number;
  /** Kept bytes of stdout and of stderr, each. */
  maxOutputBytes: number;
  /** Largest file the code may write in its working folder. */
  maxFileBytes: number;
  /** All the working folder may hold; above it (or past MAX_FOLDER_ENTRIES entries) the child is killed. */
  maxFolderBytes: number;
  /** Host function calls one execution may make. */
  maxHostCalls: number;
  /** Loading pyodide may take this long before the sandbox counts as failed. */
  startTimeoutMs: number;
}

export interface SandboxTimings {
  runMs: number;
  killMs?: number;
}

/** What the sandbox did; the runner adds the wait that came before it (RunOutcome). */
export type SandboxOutcome =
  | { kind: 'exited'; returnCode: number; stdout: string; stderr: string; timings: SandboxTimings }
  | { kind: 'killed'; reason: KillReason; stdout: string; stderr: string; timings: SandboxTimings };

/**
 * How often the working folder is measured. A walk costs more than a read of /proc; what code
 * can write between two walks is bounded by the disk's speed and, per file, by maxFileBytes.
 */
const FOLDER_POLL_MS = 100;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The kernel's OOM killer ended it (its cgroup's memory.max). */
  overCgroupMemory: boolean;
}

/** Each distinct failure of a sandbox's cgroup, said once per service. */
const memoryLimitWarnings = new Set<string>();

export class SandboxProcess {
  /** Resolves once pyodide is loaded; rejects when the sandbox cannot start. */
  readonly ready: Promise<void>;
  private readonly child: ChildProcess;
  private readonly folder: string;
  private readonly gone: Promise<Exit>;
  private readonly lines: MessageLines;
  private readonly input: AnswerWriter;
  private readonly cgroup: SandboxCgroup | undefined;
  private nodePid: number | undefined;
  private loaded = false;
  private exited = false;
  private used = false;
  private stdout: CappedOutput;
  private stderr: CappedOutput;
  private calls: HostCalls | undefined;
  private memoryWatch: MemoryWatch | undefined;
  private killReason: KillReason | undefined;
  /** What the child sent that honest code would not, when the kill was a protocol breach. */
  private breach: string | undefined;
  private killedAt: number | undefined;

  constructor(
    private readonly platform: SandboxPlatform,
    private readonly limits: SandboxLimits,
    paths: SandboxPaths,
    kernelMemory: KernelMemoryLimit = { kind: 'none' },
  ) {
    this.folder = mkdtempSync(join(tmpdir(), 'mms-sandbox-'));
    if (platform.user) chownSync(this.folder, platform.user.uid, platform.user.gid);
    // Start-up output is kept too, so that a failed start can say why.
    this.stdout = new CappedOutput(limits.maxOutputBytes);
    this.stderr = new CappedOutput(limits.maxOutputBytes);
    const mode = paths.snapshotFile ? ['run', paths.snapshotFile] : ['run'];
    this.cgroup = kernelMemory.kind === 'cgroup' ? makeCgroup(kernelMemory.folder, limits.memoryMb) : undefined;
    const memory: SandboxMemory =
      kernelMemory.kind === 'address-space'
        ? { addressSpaceBytes: kernelMemory.bytes }
        : this.cgroup === undefined
          ? {}
          : { cgroup: this.cgroup.folder };
    const [command, ...args] = sandboxCommand(platform, limits, paths, this.folder, mode, memory);
    this.child = spawn(command!, args, {
      ...sandboxSpawnOptions(platform, this.folder),
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    const closed = new Promise<Omit<Exit, 'overCgroupMemory'>>((resolve) => {
      this.child.on('close', (code, signal) => resolve({ code, signal }));
      this.child.on('error', () => resolve({ code: null, signal: null }));
    });
    this.gone = closed.then(async (exit) => {
      this.exited = true;
      const overCgroupMemory = (await this.cgroup?.oomKilled()) ?? false;
      await this.cgroup
        ?.remove()
        .catch((error: Error) => warnOnce(`removing a sandbox cgroup failed: ${error.message}`));
      return { ...exit, overCgroupMemory };
    });
    void this.gone.then(() => rm(this.folder, { recursive: true, force: true }));
    this.input = new AnswerWriter(this.child.stdin!, (why) => this.kill('protocol_breach', why));
    // A write to a child that has just died must not become an uncaught EPIPE.
    this.child.stdin!.on('error', () => {});
    this.child.stdout!.on('data', (chunk: Buffer) => this.stdout.push(chunk));
    this.child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    let readySignal: () => void = () => {};
    const loadedMessage = new Promise<void>((resolve) => (readySignal = resolve));
    this.lines = new MessageLines(
      MAX_MESSAGE_BYTES,
      (message) => {
        if (!this.loaded && (message as { type?: unknown }).type === 'ready') {
          this.loaded = true;
          readySignal();
        } else if (this.calls) this.calls.receive(message);
        else this.kill('protocol_breach', 'a message before any program was sent');
      },
      (why) => this.kill('protocol_breach', why),
    );
    (this.child.stdio[3] as Readable).on('data', (chunk: Buffer) => this.lines.push(chunk));
    this.ready = this.start(loadedMessage);
    // Nobody may be waiting on a pooled sandbox's start; its failure is reported to whoever takes it.
    this.ready.catch(() => {});
  }

  get isReady(): boolean {
    return this.loaded && this.nodePid !== undefined;
  }

  get isGone(): boolean {
    return this.exited;
  }

  /** Settles when the child has exited and its pipes are closed. */
  get whenGone(): Promise<void> {
    return this.gone.then(() => {});
  }

  /** Runs `code`; the sandbox is spent afterwards, whatever happened. */
  async execute(code: string, options: RunOptions): Promise<SandboxOutcome> {
    if (this.used) throw new Error('a sandbox runs one execution only');
    this.used = true;
    this.stdout = new CappedOutput(this.limits.maxOutputBytes);
    this.stderr = new CappedOutput(this.limits.maxOutputBytes);
    const started = performance.now();
    const deadline = new PausableDeadline(this.limits.timeoutMs, () => this.kill('time_limit'));
    const wallClock = setTimeout(
      () => this.kill('time_limit'),
      this.limits.wallTimeoutMs ?? this.limits.timeoutMs * WALL_CLOCK_MULTIPLE,
    );
    // Ends host function calls still in flight when the execution is over, however it ended.
    const over = new AbortController();
    this.memoryWatch = watchMemory(this.nodePid!, this.child.pid!, this.limits.memoryMb * 1024);
    const folderWatch = this.watchFolder();
    const abort = () => this.kill('aborted');
    options.signal.addEventListener('abort', abort, { once: true });
    if (options.signal.aborted) abort();
    this.calls = new HostCalls({
      maxHostCalls: this.limits.maxHostCalls,
      options,
      deadline,
      over: over.signal,
      answers: this.input,
      onBreach: (why) => this.kill('protocol_breach', why),
    });
    this.input.send({
      type: 'run',
      code,
      functions: options.hostFunctions,
      limits: {
        maxHostCalls: this.limits.maxHostCalls,
        maxCallsInFlight: MAX_CALLS_IN_FLIGHT,
        maxMessageBytes: MAX_MESSAGE_BYTES,
      },
    });
    const exit = await this.gone;
    over.abort();
    clearTimeout(wallClock);
    deadline.stop();
    this.memoryWatch.stop();
    clearInterval(folderWatch);
    options.signal.removeEventListener('abort', abort);
    const killedAt = this.killedAt ?? this.memoryWatch.kill?.at;
    const timings: SandboxTimings = {
      runMs: performance.now() - started,
      ...(killedAt === undefined ? {} : { killMs: performance.now() - killedAt }),
    };
    return this.outcome(exit, timings);
  }

  /**
   * Kills the child (and so its namespace); `reason` says why for the outcome, and `breach`
   * what it sent, for a protocol breach. Nothing more of it is read or answered: the rest of a
   * flood already in the pipe must cost the service nothing.
   */
  kill(reason: KillReason, breach?: string): void {
    if (this.exited || this.killReason !== undefined) return;
    this.killReason = reason;
    this.breach = breach;
    this.killedAt = performance.now();
    this.lines.stop();
    this.input.close();
    (this.child.stdio[3] as Readable).destroy();
    // The whole group: unshare and the sandbox it forked, whether or not that one is known yet.
    killSandbox(this.child);
  }

  /** Kills a sandbox nobody will use (pool shut down) and waits until it is gone. */
  async dispose(): Promise<void> {
    this.kill('aborted');
    await this.gone;
  }

  private async start(loadedMessage: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), this.limits.startTimeoutMs)),
    );
    const first = await Promise.race([
      loadedMessage.then(() => 'loaded' as const),
      this.gone.then(() => 'exited' as const),
      timedOut,
    ]);
    clearTimeout(timer);
    if (first === 'timeout') {
      this.kill('time_limit');
      throw new Error(`the sandbox did not load within ${this.limits.startTimeoutMs} ms`);
    }
    if (first === 'exited') {
      const exit = await this.gone;
      throw new Error(
        `the sandbox exited while starting (${exit.signal ?? `code ${exit.code}`}): ${describeStartFailure(this.stderr.text())}`,
      );
    }
    const nodePid = this.platform.namespaces ? await childPid(this.child.pid!) : this.child.pid;
    if (nodePid === undefined) {
      this.kill('protocol_breach', 'no sandbox process under its namespace launcher');
      throw new Error('the sandbox process could not be found under its namespace launcher');
    }
    this.nodePid = nodePid;
  }

  /** The most address space the loaded sandbox has mapped (kernel-memory-limit.ts measures it so). */
  async addressSpacePeakKb(): Promise<number> {
    await this.ready;
    const status = await readFile(`/proc/${this.nodePid}/status`, 'utf8');
    const peakKb = Number(/^VmPeak:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0);
    if (peakKb === 0) throw new Error(`process ${this.nodePid} has no VmPeak`);
    return peakKb;
  }

  private watchFolder(): NodeJS.Timeout {
    let measuring = false;
    return setInterval(() => {
      if (measuring || this.exited) return;
      measuring = true;
      folderUsage(this.folder, this.limits.maxFolderBytes)
        .then((usage) => {
          if (isOver(usage, this.limits.maxFolderBytes)) this.kill('disk_limit');
        })
        .finally(() => (measuring = false));
    }, FOLDER_POLL_MS);
  }

  /** The limit that ended a child the service did not kill itself: its watchdog's, or the kernel's. */
  private limitThatEnded(exit: Exit): KillReason | undefined {
    if (this.memoryWatch?.kill !== undefined || exit.overCgroupMemory) return 'memory_limit';
    if (exit.signal === 'SIGXCPU') return 'time_limit';
    return undefined;
  }

  private outcome(exit: Exit, timings: SandboxTimings): SandboxOutcome {
    const stdout = this.stdout.text();
    const notes: string[] = [];
    if (this.stdout.droppedBytes > 0)
      notes.push(`[stdout cut at ${this.limits.maxOutputBytes} bytes; ${this.stdout.droppedBytes} more bytes dropped]`);
    if (this.stderr.droppedBytes > 0)
      notes.push(`[stderr cut at ${this.limits.maxOutputBytes} bytes; ${this.stderr.droppedBytes} more bytes dropped]`);
    const reason = this.killReason ?? this.limitThatEnded(exit);
    if (reason === 'memory_limit')
      notes.push(`MemoryError: the sandbox went over its memory limit of ${this.limits.memoryMb} MB and was killed`);
    if (reason === 'protocol_breach')
      notes.push(`the sandbox broke its message protocol (${this.breach ?? 'unknown'}) and was killed`);
    if (reason === 'disk_limit')
      notes.push(
        `OSError: the working folder went over its limit of ${this.limits.maxFolderBytes} bytes or ${MAX_FOLDER_ENTRIES} entries and the sandbox was killed`,
      );
    if (exit.signal === 'SIGXFSZ')
      notes.push(`OSError: a file went over the limit of ${this.limits.maxFileBytes} bytes and the sandbox was killed`);
    let stderr = this.stderr.text();
    for (const note of notes) stderr += `${stderr === '' || stderr.endsWith('\n') ? '' : '\n'}${note}\n`;
    if (reason !== undefined) return { kind: 'killed', reason, stdout, stderr, timings };
    const returnCode = exit.code ?? 128 + (exit.signal ? (osConstants.signals[exit.signal] ?? 0) : 0);
    return { kind: 'exited', returnCode, stdout, stderr, timings };
  }
}

/**
 * Makes a sandbox's cgroup, or says once why it could not. The folder was tried when the runner
 * started, so this is rare (a limit on cgroups reached): the sandbox then runs with the watchdog.
 */
function makeCgroup(parent: string, memoryMb: number): SandboxCgroup | undefined {
  try {
    return SandboxCgroup.create(parent, memoryMb);
  } catch (error) {
    warnOnce(`a sandbox cgroup could not be made in ${parent} (${(error as Error).message})`);
    return undefined;
  }
}

function warnOnce(detail: string): void {
  if (memoryLimitWarnings.has(detail)) return;
  memoryLimitWarnings.add(detail);
  process.emitWarning(`code execution: ${detail}`, { code: 'MMS_SANDBOX_MEMORY_LIMIT' });
}

/** The one child of the namespace launcher, which is the sandbox's node process. */
async function childPid(launcherPid: number): Promise<number | undefined> {
  try {
    const listed = (await readFile(`/proc/${launcherPid}/task/${launcherPid}/children`, 'utf8')).trim().split(/\s+/)[0];
    if (listed) return Number(listed);
  } catch {
    // Kernels without CONFIG_PROC_CHILDREN: look for the process whose parent is the launcher.
  }
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (Number(stat.split(') ')[1]?.split(' ')[1]) === launcherPid) return Number(entry);
  }
  return undefined;
}
