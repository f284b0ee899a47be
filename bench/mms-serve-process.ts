/**
 * `mms serve` as a benchmark runs it: the compiled command (packages/server/bin/mms.js, built
 * first when a source is newer than the build: test/mms-command.ts), from a config file written
 * for the run, with its default logging (the access line of every request, at info, to stdout,
 * here /dev/null) and metrics: what users run, rather than the app built in process under tsx
 * (issue 36; a start through tsx and its loader hooks cost more CPU per request too).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MMS } from '../test/mms-command.js';
import { freePort, stopProcess } from './gateway/peers.js';

export interface MmsServeProcess {
  port: number;
  /** The child's process id, for reading its CPU time (/proc/<pid>/stat). */
  pid: number;
  stop(): Promise<void>;
}

export interface ServeOptions {
  /** Extra flags for node (`--cpu-prof`, say), before the command. */
  nodeOptions?: readonly string[];
  /**
   * The root of another checkout of the project whose command to run (bench/compare-checkouts.ts),
   * built there already (its `npm ci` builds it); by default this checkout's, built if stale.
   */
  checkout?: string;
}

/** Starts `mms serve --config <file> --port <free port>` and resolves once `/health` answers. */
export async function startMmsServe(
  name: string,
  config: Record<string, unknown>,
  options: ServeOptions = {},
): Promise<MmsServeProcess> {
  const command = options.checkout === undefined ? MMS : [join(options.checkout, 'packages/server/bin/mms.js')];
  const folder = mkdtempSync(join(tmpdir(), 'mms-bench-serve-'));
  const configFile = join(folder, 'config.json');
  writeFileSync(configFile, JSON.stringify(config));
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeOptions ?? []),
      ...command,
      'serve',
      '--config',
      configFile,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    // The data folder holds the signing key made at the first start: one per run.
    { cwd: folder, env: { ...process.env, MMS_DATA_FOLDER: folder }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-4000)));
  try {
    await untilHealthy(child, port, () => errors);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(folder, { recursive: true, force: true });
    throw new Error(`${name}: ${(error as Error).message}`);
  }
  return {
    port,
    pid: child.pid!,
    stop: async () => {
      // In-flight requests finish, and a CPU profile is written, before it exits.
      await stopProcess(child, 15_000);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function untilHealthy(child: ChildProcess, port: number, errors: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`mms serve exited with ${child.exitCode}: ${errors()}`);
    const answered = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (answered) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`mms serve did not answer /health on port ${port} within 30 s: ${errors()}`);
}
