/**
 * The service under attack, for every script in bench/attack/: `mms serve` of a checkout (this
 * one, or another for a before/after comparison: `--checkout ../mms-main`) in a child process of
 * its own, so that the attacker never shares its event loop, on a loopback port the system
 * picks, with the config given here and, optionally, a lowered open file limit
 * (`prlimit --nofile`, as systemd's LimitNOFILE would set it, which execs the service in the
 * same process) and a bench-only loop blocker (loop-blocker.ts). The harness notes a crash (the
 * child exiting before stop()), samples its peak resident memory (VmHWM, kept from the last
 * sample once it is gone), reads its worst event-loop delay (the bench-only loop-delay-meter.ts,
 * always preloaded) and keeps the end of its log. The child is killed when the attack
 * ends or its time runs out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoopDelay } from './loop-delay-meter.js';
import { memoryKb } from './process-memory.js';

export const ATTACK_API_KEY = 'attack-key-0123456789';

export interface ServiceChild {
  baseURL: string;
  port: number;
  pid: number;
  /** Headers of an authorized Messages request. */
  headers: Record<string, string>;
  /** How the child ended (`exit 1`, `SIGABRT`) when it did before stop(): a crash. */
  crashed(): string | undefined;
  /** The child's peak resident memory in MB (VmHWM); undefined where /proc has none. */
  peakRssMb(): number | undefined;
  /**
   * The service's worst event-loop delay that ended at or after `since` (Date.now() time), as its
   * own loop measured it (loop-delay-meter.ts); a delay of 0 when none passed the meter's floor.
   */
  worstLoopDelay(since: number): LoopDelay;
  /** Holds the service's loop busy for `loopBlockMs` (SIGUSR2 to the loop blocker). */
  blockLoop(): void;
  /** The last LOG_TAIL_CHARACTERS of the child's stdout and stderr. */
  logTail(): string;
  /** Kills the child and waits for it to be gone. */
  stop(): Promise<void>;
}

export interface ServiceChildOptions {
  /** Root of the checkout whose `mms serve` runs; default this one. */
  checkout?: string;
  /** The config file's contents (without apiKeys: the key is given in MMS_API_KEYS). */
  config: Record<string, unknown>;
  /** The child's open file limit, soft and hard; default: this process's. */
  fileLimit?: number;
  /** Preload loop-blocker.ts, blocking the loop this long on each blockLoop(). */
  loopBlockMs?: number;
  /** MMS_LOG_LEVEL; default info. */
  logLevel?: string;
}

const THIS_CHECKOUT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Time the child has to load and listen. */
const START_TIMEOUT_MS = 30_000;
/** How often VmHWM is read: a crash leaves the last reading. */
const MEMORY_SAMPLE_MS = 200;
const LOG_TAIL_CHARACTERS = 64 * 1024;

/** Children still running: killed when this process exits or is interrupted, so that none outlives the attack. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    for (const child of running) child.kill('SIGKILL');
    process.exit(130);
  });

export async function startServiceChild(options: ServiceChildOptions): Promise<ServiceChild> {
  const checkout = resolve(options.checkout ?? THIS_CHECKOUT);
  const bin = join(checkout, 'packages', 'server', 'bin', 'mms.js');
  if (!existsSync(bin)) throw new Error(`${checkout} has no packages/server/bin/mms.js: give the root of a checkout`);
  const folder = mkdtempSync(join(tmpdir(), 'mms-attack-'));
  const configPath = join(folder, 'config.json');
  writeFileSync(configPath, JSON.stringify({ ...options.config, dataFolder: folder }));
  const loopDelayFile = join(folder, 'loop-delay.json');
  // The preloads are this checkout's, TypeScript, so tsx (this checkout's too) loads before them.
  const preload = ['--import', import.meta.resolve('tsx'), '--import', benchModule('loop-delay-meter.ts')];
  if (options.loopBlockMs !== undefined) preload.push('--import', benchModule('loop-blocker.ts'));
  // The port is picked here, not by the child, so that no log level hides it (another process
  // could take it in between: on a bench machine's loopback, a start that fails says so).
  const port = await freePort();
  const serve = [
    process.execPath,
    ...preload,
    bin,
    'serve',
    '--config',
    configPath,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
  ];
  const command = options.fileLimit === undefined ? serve : ['prlimit', `--nofile=${options.fileLimit}`, ...serve];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: checkout,
    env: {
      ...process.env,
      MMS_API_KEYS: ATTACK_API_KEY,
      MMS_LOG_LEVEL: options.logLevel ?? 'info',
      MMS_ATTACK_LOOP_DELAY_FILE: loopDelayFile,
      ...(options.loopBlockMs === undefined ? {} : { MMS_ATTACK_LOOP_BLOCK_MS: String(options.loopBlockMs) }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let log = '';
  const keep = (chunk: Buffer): void => {
    log = (log + chunk.toString()).slice(-LOG_TAIL_CHARACTERS);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let stopping = false;
  let ending: string | undefined;
  const gone = new Promise<void>((done) =>
    child.once('exit', (code, signal) => {
      ending = signal ?? `exit ${String(code)}`;
      running.delete(child);
      done();
    }),
  );
  await healthAnswered(
    port,
    () => ending,
    () => log,
  ).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  let peakKb = 0;
  const sampleMemory = (): void => {
    peakKb = Math.max(peakKb, memoryKb(child.pid!, 'VmHWM') ?? 0);
  };
  const sampler = setInterval(sampleMemory, MEMORY_SAMPLE_MS);
  sampler.unref();
  return {
    baseURL: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    headers: { 'x-api-key': ATTACK_API_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    crashed: () => (stopping ? undefined : ending),
    peakRssMb: () => {
      if (ending === undefined) sampleMemory();
      return peakKb === 0 ? undefined : peakKb / 1024;
    },
    worstLoopDelay: (since) => {
      // No file: no delay passed the floor yet.
      const lines = existsSync(loopDelayFile) ? readFileSync(loopDelayFile, 'utf8').split('\n') : [];
      let worst: LoopDelay = { delayMs: 0, endedAt: since };
      for (const line of lines) {
        if (line === '') continue;
        const delay = JSON.parse(line) as LoopDelay;
        if (delay.endedAt >= since && delay.delayMs > worst.delayMs) worst = delay;
      }
      return worst;
    },
    blockLoop: () => {
      if (options.loopBlockMs === undefined) throw new Error('blockLoop() needs the loopBlockMs option');
      child.kill('SIGUSR2');
    },
    logTail: () => log,
    stop: async () => {
      if (ending === undefined) sampleMemory();
      stopping = ending === undefined;
      clearInterval(sampler);
      child.kill('SIGKILL');
      await gone;
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function benchModule(name: string): string {
  return new URL(`./${name}`, import.meta.url).href;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}

/** Waits for the child's first /health answer, or fails when it exits or takes too long. */
async function healthAnswered(port: number, ended: () => string | undefined, output: () => string): Promise<void> {
  const giveUp = performance.now() + START_TIMEOUT_MS;
  for (;;) {
    const ending = ended();
    if (ending !== undefined) throw new Error(`the service ended (${ending}) before it listened:\n${output()}`);
    if (performance.now() > giveUp)
      throw new Error(`the service did not listen within ${START_TIMEOUT_MS} ms:\n${output()}`);
    const answered = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (answered) return;
    await new Promise((done) => setTimeout(done, 100));
  }
}
