/**
 * What the code execution tool needs from whatever runs the code. The service ships one
 * implementation, `ChildProcessRunner` (one fresh, locked-down child process per execution,
 * from a warm pool); at scale a runner that starts a container or a microVM per execution can
 * take its place without the tool or the agent loop changing.
 *
 * A runner's promises:
 * - every execution starts from a clean state: nothing from an earlier execution is visible;
 * - the code cannot read the service's files or environment, reach the network, or signal the
 *   service's processes, by any path the language offers (including pyodide's `import js`);
 * - a time limit on the sandbox's own running time, an overall wall-clock limit that counts
 *   host function calls too, and a cap on its resident memory are enforced by killing the
 *   execution, and stdout and stderr are cut at a byte cap;
 * - host functions are the only way out, and the runner checks every call against the list it
 *   was given, because the code may forge any message its side of the channel can send.
 */
export interface CodeRunner {
  run(code: string, options: RunOptions): Promise<RunOutcome>;
  /** Kills every execution and warm sandbox; later runs answer `unavailable`. */
  close(): Promise<void>;
}

/** A function the code may await, bridged to the host (programmatic tool calling). */
export interface HostFunction {
  /** The Python name, the same as the tool's (`web_search`, `web_fetch`). */
  name: string;
  /** Its one positional parameter, the tool input's main field (`query`, `url`). */
  firstParameter: string;
  /** When set, the function exists but raises PermissionError with this text: the tool is the model's alone. */
  refusal?: string;
}

export interface RunOptions {
  hostFunctions: readonly HostFunction[];
  /**
   * Runs one host function call; what it resolves to goes back to the code as JSON. A runner
   * aborts `signal` when the execution ends first, so that no search or fetch outlives it.
   */
  callHost(name: string, input: Record<string, unknown>, signal?: AbortSignal): Promise<unknown>;
  signal: AbortSignal;
}

export interface RunTimings {
  /** Time waiting for an execution slot and a sandbox to be ready. */
  waitMs: number;
  /** Whether a loaded sandbox was waiting in the pool when this execution asked (a pool hit). */
  warm: boolean;
  /** From sending the program to the sandbox being gone. */
  runMs: number;
  /** For a killed execution: from the limit being hit to the sandbox being gone. */
  killMs?: number;
}

export type RunOutcome =
  /** The program ended by itself; a Python exception is this too, with its traceback in stderr. */
  | { kind: 'exited'; returnCode: number; stdout: string; stderr: string; timings: RunTimings }
  /** The runner killed it: over its time or memory, a protocol breach, or the caller went away. */
  | { kind: 'killed'; reason: KillReason; stdout: string; stderr: string; timings: RunTimings }
  /** No sandbox could be started. */
  | { kind: 'unavailable'; detail: string }
  /** Every execution slot stayed busy for longer than the runner waits. */
  | { kind: 'busy' };

export type KillReason = 'time_limit' | 'memory_limit' | 'disk_limit' | 'protocol_breach' | 'aborted';
