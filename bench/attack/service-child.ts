/**
 * The service under attack, in a child process of its own: `mms serve` of a checkout (this one,
 * or another for a before/after comparison: `--checkout ../mms-main`), on a loopback port the
 * system picks, with the config given here and, optionally, a lowered open file limit
 * (`prlimit --nofile`, as systemd's LimitNOFILE would set it). The child is killed when the
 * attack ends or its time runs out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ATTACK_API_KEY = 'attack-key-0123456789';

export interface ServiceChild {
  baseURL: string;
  /** Headers of an authorized Messages request. */
  headers: Record<string, string>;
  stop(): void;
}

export interface ServiceChildOptions {
  /** Root of the checkout whose `mms serve` runs; default this one. */
  checkout?: string;
  /** The config file's contents (without apiKeys: the key is given in MMS_API_KEYS). */
  config: Record<string, unknown>;
  /** The child's open file limit, soft and hard; default: this process's. */
  fileLimit?: number;
}

const THIS_CHECKOUT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Time the child has to load and listen. */
const START_TIMEOUT_MS = 30_000;

export async function startServiceChild(options: ServiceChildOptions): Promise<ServiceChild> {
  const checkout = resolve(options.checkout ?? THIS_CHECKOUT);
  const bin = join(checkout, 'packages', 'server', 'bin', 'mms.js');
  if (!existsSync(bin)) throw new Error(`${checkout} has no packages/server/bin/mms.js: give the root of a checkout`);
  const folder = mkdtempSync(join(tmpdir(), 'mms-attack-'));
  const configPath = join(folder, 'config.json');
  writeFileSync(configPath, JSON.stringify({ ...options.config, dataFolder: folder }));
  const serve = [process.execPath, bin, 'serve', '--config', configPath, '--host', '127.0.0.1', '--port', '0'];
  const command = options.fileLimit === undefined ? serve : ['prlimit', `--nofile=${options.fileLimit}`, ...serve];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: checkout,
    env: { ...process.env, MMS_API_KEYS: ATTACK_API_KEY, MMS_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const baseURL = await listeningAddress(child);
  return {
    baseURL,
    headers: { 'x-api-key': ATTACK_API_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    stop: () => void child.kill('SIGKILL'),
  };
}

/** The address from the child's "Server listening at http://..." log line. */
function listeningAddress(child: ChildProcess): Promise<string> {
  return new Promise((resolveAddress, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the service did not listen within ${START_TIMEOUT_MS} ms:\n${output}`));
    }, START_TIMEOUT_MS);
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      const found = /Server listening at (http:\/\/[0-9.:]+)/.exec(output);
      if (!found) return;
      clearTimeout(timer);
      // Keep draining the child's output, so that its log never blocks it.
      child.stdout?.resume();
      resolveAddress(found[1]!);
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${String(code)}) before it listened:\n${output}`));
    });
  });
}
