/**
 * The published packages as a user gets them: protocol, server and client packed with `npm pack`
 * (each package's prepack builds it), installed from their tarballs into an empty folder outside
 * the repository, and run there with nothing of the repository's: `npx mms serve` on the
 * scripted config until /health answers, and the client imported from a plain .mjs under plain
 * node. No tsx and no sources, only what the tarballs hold. Third-party dependencies come from
 * the registry through npm's cache (--prefer-offline); without a registry the test is skipped.
 *
 * npm runs no scripts here. Packing, each package's prepack would run `tsc -b` again over a build
 * that importing test/mms-command.ts has just brought up to date (it rebuilds when a source is
 * newer); installing, node-llama-cpp's postinstall would probe its binaries (2 s of CPU) for a
 * service that serves the scripted config. Nor does npm write a lockfile nobody reads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { listeningPort } from './mms-command.js';

const ROOT = process.cwd();
const KEY = 'packages-test-key-123';
const PACKAGES = ['protocol', 'server', 'client'];
/** What npm prints when it cannot reach the registry at all. */
const NO_REGISTRY = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|ETIMEDOUT|ECONNRESET)\b/;

/** Plain JavaScript as a user of the client writes it: argv is the service's URL and key. */
const CLIENT_CHECK = `
import { Client } from '@model-messages/client';
import { API_VERSIONS } from '@model-messages/protocol';

const [baseURL, apiKey] = process.argv.slice(2);
if (API_VERSIONS.length === 0) throw new Error('the protocol package exports no API versions');
const client = new Client({ baseURL, apiKey, models: { small: 'small', mid: 'mid', large: 'large' } });
const result = await client.messages({
  model: 'mid',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'Hello from a plain .mjs' }],
});
const text = result.ok ? result.value.content.map((block) => block.text ?? '').join('') : result.message;
process.stdout.write(JSON.stringify({ ok: result.ok, model: result.ok ? result.value.model : undefined, text }));
`;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

interface PackedFile {
  path: string;
}

interface Packed {
  name: string;
  filename: string;
  files: PackedFile[];
}

/**
 * The environment without npm's own variables: run under `npm test`, they name this repository
 * (its prefix, its config), and an npm started from them would take the repository for the project.
 */
function outsideEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const environment = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')),
  );
  return { ...environment, ...extra };
}

async function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<Run> {
  const child = spawn(command, args, { cwd, env: outsideEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const [status] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { status, stdout, stderr };
}

/** The root's overrides (node-llama-cpp's GPU binaries to an empty package), with their paths made absolute. */
function cpuOnlyOverrides(): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    overrides: Record<string, string>;
  };
  return Object.fromEntries(
    Object.entries(manifest.overrides).map(([name, spec]) => [
      name,
      spec.startsWith('file:') ? `file:${join(ROOT, spec.slice('file:'.length))}` : spec,
    ]),
  );
}

test(
  'protocol, server and client packed, installed outside the repository, serve and call without tsx',
  { timeout: 600_000 },
  async (t) => {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), 'mms-packages-')));
    assert.ok(relative(ROOT, folder).startsWith('..'), `${folder} must lie outside the repository ${ROOT}`);
    t.after(() => rmSync(folder, { recursive: true, force: true }));
    const tarballs = join(folder, 'tarballs');
    const project = join(folder, 'project');
    mkdirSync(tarballs);
    mkdirSync(project);

    // What prepack would run is the build the root's `npm run build` makes; the server's copies
    // the console's page and its vendored preact and htm too (issue 37).
    for (const name of PACKAGES) {
      const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', name, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      };
      const consoleFiles = name === 'server' ? ' && node console/copy-console-files.mjs' : '';
      assert.equal(manifest.scripts.prepack, `tsc -b tsconfig.build.json${consoleFiles}`, name);
    }
    const workspaces = PACKAGES.flatMap((name) => ['--workspace', `packages/${name}`]);
    const pack = await run(
      'npm',
      ['pack', ...workspaces, '--pack-destination', tarballs, '--json', '--ignore-scripts'],
      ROOT,
      300_000,
    );
    assert.equal(pack.status, 0, pack.stderr);
    // No script runs, so stdout is npm's JSON alone.
    const packed = JSON.parse(pack.stdout) as Packed[];
    assert.deepEqual(
      packed.map((entry) => entry.name),
      PACKAGES.map((name) => `@model-messages/${name}`),
    );
    for (const { name, files } of packed) {
      const paths = files.map((file) => file.path);
      assert.ok(paths.includes('dist/index.js') && paths.includes('dist/index.d.ts'), `${name}: ${paths.join(', ')}`);
      const unwanted = paths.filter(
        (path) =>
          /^(src|test)\//.test(path) ||
          /\.test\.|tsbuildinfo|tsconfig/.test(path) ||
          path.endsWith('.ts') !== path.endsWith('.d.ts') ||
          path.includes('typescript-worker'),
      );
      assert.deepEqual(unwanted, [], `${name} ships only what runs`);
    }
    const serverFiles = packed[1]!.files.map((file) => file.path);
    for (const path of [
      'bin/mms.js',
      'dist/cli/main.js',
      'dist/http/json-parse-thread.js',
      'dist/tools/code-execution/sandbox-child.mjs',
      'dist/console/index.html',
      'dist/console/main.js',
      'dist/console/preact.js',
      'dist/console/third-party-licenses.txt',
      'config.schema.json',
    ])
      assert.ok(serverFiles.includes(path), `the server package holds ${path}`);

    // The recipe the README gives for a CPU-only install; without it npm fetches node-llama-cpp's
    // CUDA and Vulkan builds too (hundreds of megabytes), which would make this test slow, not fail.
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'mms-install-check', private: true, overrides: cpuOnlyOverrides() }),
    );
    const install = await run(
      'npm',
      [
        'install',
        ...packed.map((entry) => join(tarballs, entry.filename)),
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--ignore-scripts',
        '--no-package-lock',
        '--loglevel=error',
      ],
      project,
      480_000,
    );
    if (install.status !== 0 && NO_REGISTRY.test(install.stderr)) {
      t.skip(
        `npm cannot install the packages' dependencies without the registry: ${install.stderr.trim().split('\n')[0]}`,
      );
      return;
    }
    assert.equal(install.status, 0, install.stderr);
    // better-sqlite3's addon is built by its install script, which --ignore-scripts skips (and
    // which takes a minute here): the one the repository's install built is the same package's.
    cpSync(join(ROOT, 'node_modules/better-sqlite3/build'), join(project, 'node_modules/better-sqlite3/build'), {
      recursive: true,
    });
    const installed = JSON.parse(
      readFileSync(join(project, 'node_modules/@model-messages/server/package.json'), 'utf8'),
    );
    assert.equal(installed.dependencies.tsx, undefined, 'tsx is no dependency of the installed server');

    // Through the link npm made in node_modules/.bin, which npx finds; npx itself (1 s of CPU)
    // starts the service below.
    const version = await run(join(project, 'node_modules/.bin/mms'), ['--version'], project, 60_000);
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout, `${installed.version}\n`);

    const config = JSON.parse(readFileSync(join(ROOT, 'examples/scripted.json'), 'utf8')) as Record<string, unknown>;
    delete config.$schema;
    writeFileSync(
      join(project, 'scripted.json'),
      JSON.stringify({ ...config, apiKeys: [KEY], listen: { host: '127.0.0.1', port: 0 } }),
    );
    const dataFolder = join(folder, 'data');
    // A group of its own, so that npx's child, the service, goes down with it.
    const service = spawn('npx', ['mms', 'serve', '--config', 'scripted.json'], {
      cwd: project,
      env: outsideEnvironment({ MMS_DATA_FOLDER: dataFolder }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let serviceErrors = '';
    service.stderr.on('data', (chunk) => (serviceErrors += String(chunk)));
    const exited = once(service, 'exit');
    t.after(async () => {
      process.kill(-service.pid!, 'SIGTERM');
      await exited;
    });
    const port = await listeningPort(service).catch((error: Error) => {
      throw new Error(`${error.message}\n${serviceErrors}`);
    });
    const baseURL = `http://127.0.0.1:${port}`;
    assert.equal((await fetch(`${baseURL}/health`)).status, 200);
    // The console (issue 37) is served from the package's own files, preact vendored among them.
    for (const path of ['/console', '/console/main.js', '/console/preact.js'])
      assert.equal((await fetch(`${baseURL}${path}`)).status, 200, path);

    // A body over 512 KB is parsed in a worker thread (http/json-body-parser.ts): its entry must be
    // found in the compiled package as it is from the sources.
    const large = await fetch(`${baseURL}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'mid',
        max_tokens: 16,
        messages: [{ role: 'user', content: `${'word '.repeat(120_000)}hello` }],
      }),
    });
    assert.equal(large.status, 200, await large.clone().text());

    writeFileSync(join(project, 'client-check.mjs'), CLIENT_CHECK);
    const client = await run(process.execPath, ['client-check.mjs', baseURL, KEY], project, 60_000);
    assert.equal(client.status, 0, client.stderr);
    assert.deepEqual(JSON.parse(client.stdout), { ok: true, model: 'mms-mid', text: 'Hello from a plain .mjs' });
  },
);
