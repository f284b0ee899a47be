/**
 * The peer gateways of bench/gateway.ts, installed into bench/gateway/peers (an npm project of
 * its own, and a Python virtual environment of its own, so that they never become dependencies
 * of mms) and started as child processes pointing at the bench's fake engine:
 *
 * - @portkey-ai/gateway 1.15.2 (the newest on npm). Its `/v1/messages` passes Messages requests
 *   only to providers that speak Messages natively: for `openai` it answers 500 "messages is not
 *   supported by openai" (the Messages -> chat completions adapter in its GitHub repository,
 *   src/handlers/adapterUtils.ts, is not in the published build). So it is measured as an
 *   OpenAI chat completions passthrough: `x-portkey-provider: openai` and
 *   `x-portkey-custom-host: <engine>/v1`. `@hono/node-server` is pinned to 1.14.1 (package.json
 *   overrides): from 1.14.2 on, a Response built from another Response keeps that one's
 *   immutable headers, and Portkey's `updateHeaders` then fails with `TypeError: immutable`
 *   (Portkey-AI/gateway issue 1389). With 1.19.19 (what its `^1.3.3` range installs today) and
 *   with 1.14.2, every streamed chat completion answers 500 "Something went wrong"; the
 *   non-streaming ones work. Its stream reader waits 25 ms before passing on the first chunk
 *   of every stream (src/handlers/streamHandler.ts, readStream), so its streamed latency holds
 *   that wait by design.
 * - @musistudio/claude-code-router 2.0.0: 3.x needs Node >= 22 (its `engines`); 2.0.0 declares
 *   Node >= 20 and starts offline. It reads ~/.claude-code-router/config.json, so it runs with
 *   HOME set to a temporary folder holding a config whose one provider is the fake engine.
 * - LiteLLM's proxy (issue 36), pinned in peers/litellm/requirements.txt and installed with pip
 *   into peers/litellm/venv on the first run: its `/v1/messages` takes Messages requests for any
 *   of its models and sends them to an OpenAI-compatible one as chat completions (its
 *   `openai/<model>` provider with `api_base`), as mms does. One worker, its default logging; the
 *   model cost map read from the package rather than fetched (LITELLM_LOCAL_MODEL_COST_MAP), as
 *   the machine reaches no network.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PEERS_FOLDER = fileURLToPath(new URL('./peers/', import.meta.url));

interface PeerManifest {
  dependencies: Record<string, string>;
  overrides?: Record<string, string>;
}

function installedVersion(name: string): string | undefined {
  const file = join(PEERS_FOLDER, 'node_modules', name, 'package.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version;
}

/** What package.json pins, as `name@version`, with what is installed now. */
function pinned(): Array<{ name: string; wanted: string; installed: string | undefined }> {
  const manifest = JSON.parse(readFileSync(join(PEERS_FOLDER, 'package.json'), 'utf8')) as PeerManifest;
  return Object.entries({ ...manifest.dependencies, ...manifest.overrides }).map(([name, wanted]) => ({
    name,
    wanted,
    installed: installedVersion(name),
  }));
}

/** Installs the peers on the first run (or when a pinned version changed), and says so. */
export function ensurePeersInstalled(): string[] {
  let packages = pinned();
  if (packages.some((entry) => entry.installed !== entry.wanted)) {
    const command = ['install', '--prefix', PEERS_FOLDER, '--no-audit', '--no-fund', '--ignore-scripts'];
    console.log(`peers: ${packages.map((entry) => `${entry.name}@${entry.wanted}`).join(', ')} not installed yet`);
    console.log(
      `peers: npm ${command.join(' ')}  (their own npm project, not mms's dependencies; no install scripts run)`,
    );
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const result = spawnSync(npm, command, { stdio: 'inherit' });
    if (result.status !== 0)
      throw new Error(
        `npm install --prefix ${PEERS_FOLDER} failed (exit ${String(result.status)}${result.error ? `: ${result.error.message}` : ''})`,
      );
    packages = pinned();
    const missing = packages.filter((entry) => entry.installed !== entry.wanted);
    if (missing.length > 0)
      throw new Error(
        `after npm install: ${missing.map((entry) => `${entry.name} is ${entry.installed ?? 'missing'}, wanted ${entry.wanted}`).join('; ')}`,
      );
  }
  return packages.map((entry) => `${entry.name}@${entry.installed ?? '?'}`);
}

export interface PeerProcess {
  name: string;
  port: number;
  /** The process serving, whose CPU time (and its children's) the bench reads. */
  pid: number;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The last few KB a child wrote, for the error when it does not start. */
function captureOutput(child: ChildProcess): () => string {
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => tail;
}

async function waitUntilListening(
  name: string,
  child: ChildProcess,
  port: number,
  output: () => string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`${name} exited with code ${child.exitCode} before it listened:\n${output()}`);
    try {
      // Any HTTP answer (404 included) means the server is up.
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`${name} did not listen on port ${port} within ${timeoutMs} ms:\n${output()}`);
}

/** SIGTERM, as a supervisor stops a server, then SIGKILL if it has not exited after `killAfterMs`. */
export async function stopProcess(child: ChildProcess, killAfterMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  await exited;
  clearTimeout(timer);
}

/**
 * A peer once it listens on `port`; its temporary `folder`, if it has one, is removed when it
 * stops, or at once when it never listens.
 */
export async function servedPeer(
  name: string,
  label: string,
  child: ChildProcess,
  port: number,
  options: { folder?: string; timeoutMs?: number } = {},
): Promise<PeerProcess> {
  const removeFolder = (): void => {
    if (options.folder !== undefined) rmSync(options.folder, { recursive: true, force: true });
  };
  try {
    await waitUntilListening(label, child, port, captureOutput(child), options.timeoutMs);
  } catch (error) {
    removeFolder();
    throw error;
  }
  return {
    name,
    port,
    pid: child.pid!,
    stop: async () => {
      await stopProcess(child);
      removeFolder();
    },
  };
}

export async function startPortkey(): Promise<PeerProcess> {
  const port = await freePort();
  const entry = join(PEERS_FOLDER, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  const child = spawn(process.execPath, [entry, `--port=${port}`, '--headless'], {
    cwd: PEERS_FOLDER,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return servedPeer('portkey', '@portkey-ai/gateway', child, port);
}

/** The Portkey headers that send a chat completion to an OpenAI-compatible engine at `engineBaseURL`. */
export function portkeyHeaders(engineBaseURL: string): Record<string, string> {
  return {
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': engineBaseURL,
    authorization: 'Bearer bench-engine-key',
  };
}

export async function startClaudeCodeRouter(engineBaseURL: string, engineModel: string): Promise<PeerProcess> {
  const port = await freePort();
  const home = mkdtempSync(join(tmpdir(), 'mms-bench-ccr-'));
  const configFolder = join(home, '.claude-code-router');
  mkdirSync(configFolder, { recursive: true });
  const config = {
    PORT: port,
    HOST: '127.0.0.1',
    // No log files: mms writes none during the benchmark either.
    LOG: false,
    NON_INTERACTIVE_MODE: true,
    Providers: [
      {
        name: 'bench',
        api_base_url: `${engineBaseURL}/chat/completions`,
        api_key: 'bench-engine-key',
        models: [engineModel],
      },
    ],
    Router: { default: `bench,${engineModel}` },
  };
  writeFileSync(join(configFolder, 'config.json'), JSON.stringify(config, null, 2));
  const entry = join(PEERS_FOLDER, 'node_modules', '@musistudio', 'claude-code-router', 'dist', 'cli.js');
  const child = spawn(process.execPath, [entry, 'start'], {
    cwd: home,
    env: { ...process.env, HOME: home, USERPROFILE: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return servedPeer('ccr', '@musistudio/claude-code-router', child, port, { folder: home });
}

// --- LiteLLM -----------------------------------------------------------------------------

const LITELLM_FOLDER = join(PEERS_FOLDER, 'litellm');
const LITELLM_ENVIRONMENT = join(LITELLM_FOLDER, 'venv');

/** The version requirements.txt pins: `litellm[proxy]==<version>`. */
function pinnedLiteLlm(): string {
  const line = readFileSync(join(LITELLM_FOLDER, 'requirements.txt'), 'utf8').trim();
  const version = line.split('==')[1];
  if (version === undefined) throw new Error(`peers/litellm/requirements.txt pins no version: ${line}`);
  return version;
}

function installedLiteLlm(): string | undefined {
  const python = join(LITELLM_ENVIRONMENT, 'bin', 'python');
  if (!existsSync(python)) return undefined;
  const result = spawnSync(python, ['-c', "import importlib.metadata as m; print(m.version('litellm'))"], {
    encoding: 'utf8',
  });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/**
 * Installs LiteLLM's proxy into its own virtual environment on the first run (or when the pin
 * changed), and says which; throws with pip's exit when the Python registry cannot be reached.
 */
export function ensureLiteLlmInstalled(): string {
  const wanted = pinnedLiteLlm();
  if (installedLiteLlm() !== wanted) {
    console.log(
      `peers: litellm ${wanted} not installed yet: python3 -m venv and pip install into ${LITELLM_ENVIRONMENT}`,
    );
    const created = spawnSync('python3', ['-m', 'venv', LITELLM_ENVIRONMENT], { stdio: 'inherit' });
    if (created.status !== 0)
      throw new Error(`python3 -m venv ${LITELLM_ENVIRONMENT} failed (exit ${String(created.status)})`);
    const pip = spawnSync(
      join(LITELLM_ENVIRONMENT, 'bin', 'pip'),
      ['install', '--disable-pip-version-check', '-r', join(LITELLM_FOLDER, 'requirements.txt')],
      { stdio: 'inherit' },
    );
    if (pip.status !== 0)
      throw new Error(
        `pip install litellm[proxy]==${wanted} failed (exit ${String(pip.status)}): is the Python registry reachable?`,
      );
  }
  const installed = installedLiteLlm();
  if (installed !== wanted)
    throw new Error(`after pip install: litellm is ${installed ?? 'missing'}, wanted ${wanted}`);
  return `litellm@${installed}`;
}

export async function startLiteLlm(engineBaseURL: string, engineModel: string): Promise<PeerProcess> {
  const port = await freePort();
  const folder = mkdtempSync(join(tmpdir(), 'mms-bench-litellm-'));
  // YAML is a superset of JSON: the config as JSON needs no YAML writer.
  const config = {
    model_list: [
      {
        model_name: 'bench',
        litellm_params: { model: `openai/${engineModel}`, api_base: engineBaseURL, api_key: 'bench-engine-key' },
      },
    ],
  };
  writeFileSync(join(folder, 'config.yaml'), JSON.stringify(config, null, 2));
  const child = spawn(
    join(LITELLM_ENVIRONMENT, 'bin', 'litellm'),
    ['--config', join(folder, 'config.yaml'), '--host', '127.0.0.1', '--port', String(port), '--num_workers', '1'],
    {
      cwd: folder,
      env: { ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: 'True' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return servedPeer('litellm', 'litellm', child, port, { folder, timeoutMs: 120_000 });
}
