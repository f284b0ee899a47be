/** The `mms` command as a user runs it: help, config errors, serving, graceful shutdown. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
// From their modules, not the package's index, which loads the whole service (0.6 s of CPU) that
// only the started commands run here.
import { readSse } from '../packages/testing/src/sse.js';
import { tinyLlamaModel } from '../packages/testing/src/gguf/tiny-llama.js';
import { serveSettings } from '../packages/server/src/cli/serve-settings.js';
import { ConfigError } from '../packages/server/src/support/config-error.js';
import { listeningPort, MMS } from './mms-command.js';

const KEY = 'cli-test-key-123';
// Every `mms serve` run here inherits it: a served service keeps its signing key in its data
// folder, which must not be the home folder's.
process.env.MMS_DATA_FOLDER = mkdtempSync(join(tmpdir(), 'mms-cli-data-'));

interface Finished {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `mms` to its end without blocking, so that several runs can share the wait. One that
 * should have stopped but serves instead is killed after 60 s rather than hanging the test (the
 * limit is generous: a start that loads a model takes several seconds on a loaded machine).
 */
async function runMms(args: string[], env: Record<string, string> = {}): Promise<Finished> {
  const child = spawn(process.execPath, [...MMS, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stdout, stderr };
}

/** A config with the slow scripted model, in a fresh folder; `extra` is merged into it. */
function slowConfig(extra: Record<string, unknown> = {}): string {
  const folder = mkdtempSync(join(tmpdir(), 'mms-cli-'));
  const config = join(folder, 'config.json');
  const model = {
    id: 'slow',
    tier: 'mid',
    generation: 'newer',
    contextWindow: 4096,
    maxOutputTokens: 512,
    backend: { type: 'scripted', tokenDelayMs: 20 },
  };
  writeFileSync(config, JSON.stringify({ apiKeys: [KEY], models: [model], ...extra }));
  return config;
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

test('mms --help and mms serve --help explain the commands and flags', () => {
  const help = spawnSync(process.execPath, [...MMS, '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /serve/);
  assert.match(help.stdout, /pull/);
  assert.match(help.stdout, /compare FILE/);
  const serveHelp = spawnSync(process.execPath, [...MMS, 'serve', '--help'], { encoding: 'utf8' });
  for (const flag of ['--config', '--host', '--port', 'MMS_API_KEYS', 'MMS_DATA_FOLDER', 'MMS_CONFIG'])
    assert.match(serveHelp.stdout, new RegExp(flag));
});

test('mms --version prints the server package version and exits 0', async () => {
  const { version } = JSON.parse(readFileSync('packages/server/package.json', 'utf8')) as { version: string };
  const run = await runMms(['--version']);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, `${version}\n`);
});

test('no MMS_ variable, however wrong, breaks --help', async () => {
  const env = { MMS_PORT: 'abc', MMS_HOST: '', MMS_LOG_LEVEL: 'loud', MMS_API_KEYS: 'a' };
  const [help, serveHelp] = await Promise.all([runMms(['--help'], env), runMms(['serve', '--help'], env)]);
  assert.equal(help.status, 0, help.stderr);
  assert.equal(serveHelp.status, 0, serveHelp.stderr);
  assert.match(serveHelp.stdout, /MMS_PORT/);
  assert.equal(help.stderr + serveHelp.stderr, '');
});

test('a port that is not digits from 0 to 65535, from MMS_PORT or --port, stops serve with a message naming it and exit 2', async () => {
  const cases = [
    ...['abc', '0x50', '1e3', '65536', '-1', ' 80'].map((value) => ({ source: 'MMS_PORT', value })),
    ...['1e3', '0x50'].map((value) => ({ source: '--port', value })),
  ];
  // Every value through the check that `mms serve` runs before anything else
  // (cli/serve-settings.ts): a ConfigError, which the command prints after "mms: ", exit 2.
  for (const { source, value } of cases) {
    const [flags, environment] = source === '--port' ? [{ port: value }, { MMS_PORT: '' }] : [{}, { MMS_PORT: value }];
    assert.throws(
      () => serveSettings(flags, environment),
      (error) =>
        error instanceof ConfigError &&
        error.message === `${source}: must be an integer from 0 to 65535 (it is "${value}")`,
      `${source}=${value}`,
    );
  }
  // And one of each source through the command itself.
  const config = slowConfig();
  const commands = [
    { source: 'MMS_PORT', value: '0x50', flags: [], env: { MMS_PORT: '0x50' } },
    { source: '--port', value: '1e3', flags: ['--port', '1e3'], env: { MMS_PORT: '' } },
  ];
  const runs = await Promise.all(
    commands.map(({ flags, env }) => runMms(['serve', '--config', config, ...flags], env)),
  );
  commands.forEach(({ source, value }, index) => {
    const run = runs[index]!;
    assert.equal(run.status, 2, `${source}=${value}: ${run.stderr}`);
    assert.equal(run.stderr, `mms: ${source}: must be an integer from 0 to 65535 (it is "${value}")\n`);
  });
});

test("blank MMS_PORT and MMS_HOST count as unset: the config's listen address is used", async () => {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...MMS, 'serve', '--config', slowConfig({ listen: { host: '127.0.0.1', port } })],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MMS_PORT: '', MMS_HOST: ' ' } },
  );
  try {
    assert.equal(await listeningPort(child), port);
    assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
  } finally {
    child.kill('SIGTERM');
  }
  assert.deepEqual(await once(child, 'exit'), [0, null]);
});

test('an unknown log level, from MMS_LOG_LEVEL or --log-level, stops serve before any model is prepared, exit 2', async () => {
  const config = slowConfig();
  const [fromEnvironment, fromFlag] = await Promise.all([
    runMms(['serve', '--config', config], { MMS_LOG_LEVEL: 'loud' }),
    runMms(['serve', '--config', config, '--log-level', 'verbose'], { MMS_LOG_LEVEL: 'debug' }),
  ]);
  assert.equal(fromEnvironment.status, 2, fromEnvironment.stderr);
  assert.equal(
    fromEnvironment.stderr,
    'mms: MMS_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace (it is "loud")\n',
  );
  assert.equal(fromFlag.status, 2, fromFlag.stderr);
  assert.equal(
    fromFlag.stderr,
    'mms: --log-level: must be one of fatal, error, warn, info, debug, trace (it is "verbose")\n',
  );
});

test("mms compare runs the client's tier move check: without a file it prints its usage and exits 2", () => {
  const result = spawnSync(process.execPath, [...MMS, 'compare'], { encoding: 'utf8' });
  assert.equal(result.status, 2, result.stderr);
  assert.match(result.stderr, /usage: mms compare FILE/);
});

/** Any static, dynamic, side-effect, re-export or require form naming @model-messages/client or a subpath, in any quotes, across lines. */
const IMPORTS_CLIENT = /(?:\bfrom|\bimport|\brequire)\s*\(?\s*['"`]@model-messages\/client(?:['"`/])/;

test("the import scan catches every form of importing @model-messages/client, and not the bin's run-time resolution", () => {
  const forms = [
    "import { Client } from '@model-messages/client';",
    'import { Client } from "@model-messages/client";',
    "import type { CallResult } from '@model-messages/client';",
    "import '@model-messages/client';",
    'import "@model-messages/client/compare-command";',
    "export * from '@model-messages/client';",
    "export { Client } from\n  '@model-messages/client';",
    "const client = await import('@model-messages/client');",
    'const command = await import ( "@model-messages/client/compare-command" );',
    'const client = await import(`@model-messages/client`);',
    "const { Client } = require('@model-messages/client');",
    "import client = require('@model-messages/client');",
  ];
  for (const form of forms) assert.match(form, IMPORTS_CLIENT, form);
  for (const other of [
    "await runClientCommand('@model-messages/client/compare-command', args);",
    '`@model-messages/client is not installed where this runs`',
    "import { Client } from '@model-messages/clientele';",
  ])
    assert.doesNotMatch(other, IMPORTS_CLIENT, other);
});

test('the server package neither declares nor imports the client: the `mms compare` entry resolves it at run time', () => {
  const manifest = JSON.parse(readFileSync('packages/server/package.json', 'utf8')) as Record<
    string,
    Record<string, string> | undefined
  >;
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'])
    assert.equal(manifest[field]?.['@model-messages/client'], undefined, field);
  const sources = (folder: string): string[] =>
    readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? sources(join(folder, entry.name)) : [join(folder, entry.name)],
    );
  const importers = [...sources('packages/server/src'), ...sources('packages/server/bin')].filter((path) =>
    IMPORTS_CLIENT.test(readFileSync(path, 'utf8')),
  );
  assert.deepEqual(importers, []);
});

test('mms compare run from a folder outside the workspace, where @model-messages/client is not installed, says so and exits 2', () => {
  const folder = realpathSync(mkdtempSync(join(tmpdir(), 'mms-no-client-')));
  assert.ok(
    relative(process.cwd(), folder).startsWith('..'),
    `${folder} must lie outside the workspace ${process.cwd()}`,
  );
  writeFileSync(join(folder, 'compare.json'), '{}');
  const result = spawnSync(process.execPath, [...MMS, 'compare', 'compare.json'], {
    cwd: folder,
    encoding: 'utf8',
    env: { ...process.env, NODE_PATH: '' },
  });
  assert.equal(result.status, 2, result.stderr);
  assert.equal(result.stdout, '');
  assert.equal(
    result.stderr,
    `mms compare: it is the calling client's command, and @model-messages/client is not installed where this runs (${folder}); install @model-messages/client there, or run it from the repository root\n`,
  );
});

test('a config error names the field and exits 2 before listening', () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-cli-'));
  writeFileSync(join(folder, 'bad.json'), JSON.stringify({ apiKeys: [KEY], models: [{ id: 'm', tier: 'giant' }] }));
  const result = spawnSync(process.execPath, [...MMS, 'serve', '--config', join(folder, 'bad.json')], {
    encoding: 'utf8',
  });
  assert.equal(result.status, 2);
  assert.match(result.stderr, /models\.0\.tier/);
});

test('a model whose maxOutputTokens exceeds its contextWindow stops the start with exit 2, naming the field (issue 32)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-cli-'));
  const small = { id: 'small', tier: 'small', generation: 'newer', backend: { type: 'scripted' } };
  const config = { apiKeys: [KEY], models: [{ ...small, contextWindow: 32_768, maxOutputTokens: 64_000 }] };
  writeFileSync(join(folder, 'window.json'), JSON.stringify(config));
  const result = spawnSync(process.execPath, [...MMS, 'serve', '--config', join(folder, 'window.json')], {
    encoding: 'utf8',
  });
  assert.equal(result.status, 2, result.stderr);
  assert.match(result.stderr, /models\.0\.maxOutputTokens: 64000 is more than contextWindow \(32768\)/);
});

test('without any API key the service refuses to start and says how to set one', () => {
  const result = spawnSync(process.execPath, [...MMS, 'serve', '--config', 'examples/scripted.json'], {
    encoding: 'utf8',
    env: { ...process.env, MMS_API_KEYS: '' },
  });
  assert.equal(result.status, 2);
  assert.match(result.stderr, /MMS_API_KEYS/);
});

test("a key from MMS_API_KEYS is held to the config's 8-character minimum, and the message names its position, not the key", async () => {
  const run = await runMms(['serve', '--config', slowConfig()], { MMS_API_KEYS: 'long-enough-key-1, abc' });
  assert.equal(run.status, 2, run.stderr);
  assert.equal(run.stderr, 'mms: MMS_API_KEYS: key 2 of 2: an API key must have at least 8 characters\n');
});

test("a backend that cannot be built (a scripted backend's script missing or not JSON) stops serve naming the field, exit 2", async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-cli-'));
  writeFileSync(join(folder, 'broken.json'), '[{');
  const model = { id: 'scripted', tier: 'mid', generation: 'newer', contextWindow: 4096, maxOutputTokens: 512 };
  writeFileSync(
    join(folder, 'missing.json'),
    JSON.stringify({ apiKeys: [KEY], models: [{ ...model, backend: { type: 'scripted', script: 'absent.json' } }] }),
  );
  writeFileSync(
    join(folder, 'list.json'),
    JSON.stringify({
      apiKeys: [KEY],
      models: [{ ...model, backends: [{ type: 'scripted' }, { type: 'scripted', script: 'broken.json' }] }],
    }),
  );
  const [missing, list] = await Promise.all([
    runMms(['serve', '--config', join(folder, 'missing.json')]),
    runMms(['serve', '--config', join(folder, 'list.json')]),
  ]);
  assert.equal(missing.status, 2, missing.stderr);
  assert.equal(
    missing.stderr,
    `mms: models.0.backend.script: ${join(folder, 'absent.json')}: cannot read it (ENOENT)\n`,
  );
  assert.equal(list.status, 2, list.stderr);
  assert.match(
    list.stderr,
    new RegExp(`^mms: models\\.0\\.backends\\.1\\.script: ${join(folder, 'broken.json')}: not valid JSON \\(.+\\)\\n$`),
  );
});

test('a port already in use stops serve with "cannot listen on host:port" and the reason, exit 2, no stack', async () => {
  const holder = createServer().listen(0, '127.0.0.1');
  await once(holder, 'listening');
  const { port } = holder.address() as AddressInfo;
  try {
    const run = await runMms(['serve', '--config', slowConfig(), '--port', String(port)]);
    assert.equal(run.status, 2, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(`^mms: cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use \\(EADDRINUSE\\)\\n$`),
    );
  } finally {
    holder.close();
  }
});

test('a signingKey under 32 characters, or a key file that holds no key, stops serve naming it, exit 2', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-cli-data-'));
  writeFileSync(join(folder, 'signing-key'), 'not a key\n');
  const short = slowConfig({ signingKey: 'thirty-one characters long, no.' });
  const [tooShort, badFile] = await Promise.all([
    runMms(['serve', '--config', short]),
    runMms(['serve', '--config', slowConfig()], { MMS_DATA_FOLDER: folder }),
  ]);
  assert.equal(tooShort.status, 2, tooShort.stderr);
  assert.equal(tooShort.stderr, `mms: config ${short}: signingKey: must have at least 32 characters\n`);
  assert.equal(badFile.status, 2, badFile.stderr);
  assert.match(
    badFile.stderr,
    new RegExp(
      `^mms: signing key file ${join(folder, 'signing-key')}: it does not hold a key .*delete it to make a new key`,
    ),
  );
  assert.equal(readFileSync(join(folder, 'signing-key'), 'utf8'), 'not a key\n', 'left as it was');
});

test('serve makes its key file in the data folder at first start, readable by its owner only, and keeps it', async () => {
  const folder = join(mkdtempSync(join(tmpdir(), 'mms-cli-data-')), 'not-yet');
  const keyFile = join(folder, 'signing-key');
  const contents: string[] = [];
  for (let start = 0; start < 2; start += 1) {
    const child = spawn(process.execPath, [...MMS, 'serve', '--config', slowConfig({ listen: { port: 0 } })], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, MMS_DATA_FOLDER: folder },
    });
    // Read on to the end, not as listeningPort reads (it stops reading once listening): so read,
    // the second child of this loop never exited on SIGTERM.
    let output = '';
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk) => (output += String(chunk)).includes('listening at') && resolve()),
    );
    child.kill('SIGTERM');
    assert.deepEqual(await once(child, 'exit'), [0, null]);
    contents.push(readFileSync(keyFile, 'utf8'));
  }
  assert.match(contents[0]!, /^[A-Za-z0-9+/]{43}=\n$/);
  assert.equal(contents[1], contents[0], 'the second start read the key the first made');
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
});

test('SIGTERM lets an in-flight stream finish, then the process exits 0', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-cli-'));
  const config = join(folder, 'config.json');
  const model = {
    id: 'slow',
    tier: 'mid',
    generation: 'newer',
    contextWindow: 4096,
    maxOutputTokens: 512,
    backend: { type: 'scripted', tokenDelayMs: 20 },
  };
  writeFileSync(config, JSON.stringify({ apiKeys: [KEY], models: [model] }));
  const child = spawn(process.execPath, [...MMS, 'serve', '--config', config, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await listeningPort(child);
  const body = JSON.stringify({
    model: 'slow',
    max_tokens: 100,
    stream: true,
    messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten' }],
  });
  const response = await fetch(`http://127.0.0.1:${port}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body,
  });
  child.kill('SIGTERM');
  const events = await readSse(response);
  assert.equal(events.at(-1)?.event, 'message_stop');
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0);
});

/**
 * One HTTP/1.1 request on a connection of its own that the client never ends, as a pooling
 * client keeps it for the next request: only the server can close it.
 */
function keptAliveRequest(port: number, request: string): { firstBytes: Promise<void>; whole: Promise<string> } {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  socket.write(request);
  let received = '';
  const firstBytes = once(socket, 'data').then(() => undefined);
  socket.on('data', (chunk) => (received += String(chunk)));
  const whole = new Promise<string>((resolve, reject) => {
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  }).finally(() => socket.destroy());
  return { firstBytes, whole };
}

function messagesRequest(body: Record<string, unknown>): string {
  const json = JSON.stringify(body);
  return `POST /v1/messages HTTP/1.1\r\nhost: mms\r\nx-api-key: ${KEY}\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
}

test('SIGTERM with keep-alive clients: in-flight JSON and streamed replies complete, each connection closes after its reply, exit 0 well within the grace', async () => {
  const child = spawn(process.execPath, [...MMS, 'serve', '--config', slowConfig(), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await listeningPort(child);
  const words = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
  const idle = keptAliveRequest(port, 'GET /health HTTP/1.1\r\nhost: mms\r\n\r\n');
  await idle.firstBytes;
  const streamed = keptAliveRequest(
    port,
    messagesRequest({ model: 'slow', max_tokens: 200, stream: true, messages: [{ role: 'user', content: words }] }),
  );
  await streamed.firstBytes;
  const json = keptAliveRequest(
    port,
    messagesRequest({ model: 'slow', max_tokens: 200, messages: [{ role: 'user', content: words }] }),
  );
  const jsonAnswered = json.firstBytes.then(() => Date.now());
  await new Promise((resolve) => setTimeout(resolve, 200));
  const signalled = Date.now();
  child.kill('SIGTERM');
  const [idleReply, streamedReply, jsonReply, [code]] = await Promise.all([
    idle.whole,
    streamed.whole,
    json.whole,
    once(child, 'exit') as Promise<[number | null]>,
  ]);
  const elapsed = Date.now() - signalled;
  assert.ok((await jsonAnswered) > signalled, 'the JSON reply was still in flight at SIGTERM');
  assert.equal(code, 0);
  // Before the 10 s grace ran out: the replies ended it, not the grace.
  assert.ok(elapsed < 10_000, `exited ${elapsed} ms after SIGTERM`);
  assert.match(idleReply, /^HTTP\/1\.1 200 /);
  assert.match(streamedReply, /^HTTP\/1\.1 200 /);
  assert.match(streamedReply, /event: message_stop\n/);
  assert.ok(streamedReply.endsWith('0\r\n\r\n'), 'the chunked stream ends properly');
  const [head, body] = jsonReply.split('\r\n\r\n') as [string, string];
  assert.match(head, /^HTTP\/1\.1 200 /);
  assert.match(head, /\r\nconnection: close\r\n/i);
  assert.equal((JSON.parse(body) as { stop_reason: string }).stop_reason, 'end_turn');
});

/** A config with one llama-cpp model on `model`, in a fresh folder. */
function llamaConfig(model: string, load: 'eager' | 'lazy' = 'eager'): string {
  const folder = mkdtempSync(join(tmpdir(), 'mms-cli-'));
  const config = join(folder, 'config.json');
  const entry = {
    id: 'tiny',
    tier: 'mid',
    generation: 'newer',
    contextWindow: 1024,
    maxOutputTokens: 256,
    load,
    // The tiny model's template is ChatML, which "auto" finds by rendering test conversations
    // through it for each candidate wrapper (a second or more of CPU at every load): named here.
    backend: { type: 'llama-cpp', model, threads: 1, chatWrapper: 'chatML' },
  };
  writeFileSync(config, JSON.stringify({ apiKeys: [KEY], listen: { port: 0 }, models: [entry] }));
  return config;
}

test('a model file that is not a GGUF, or cannot be loaded, stops serve naming the model, the file and the cause, exit 2', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-cli-'));
  const truncated = join(folder, 'truncated.gguf');
  const whole = readFileSync(await tinyLlamaModel());
  writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length / 2)));
  const notGguf = join(folder, 'page.gguf');
  writeFileSync(notGguf, '<html>Not Found</html>');
  // A lazy model's file is checked at start too: it must at least be a GGUF.
  const [cut, page] = await Promise.all([
    runMms(['serve', '--config', llamaConfig(truncated)]),
    runMms(['serve', '--config', llamaConfig(notGguf, 'lazy')]),
  ]);
  assert.equal(cut.status, 2, cut.stderr);
  assert.match(
    cut.stderr,
    new RegExp(
      `^mms: model tiny: ${truncated} cannot be loaded: .*data is not within the file bounds, model is corrupted or incomplete$`,
      'm',
    ),
  );
  assert.equal(page.status, 2, page.stderr);
  assert.match(
    page.stderr,
    new RegExp(`^mms: model tiny: ${notGguf} is not a GGUF file: it does not begin with "GGUF"$`, 'm'),
  );
});

test('serve loads an eager llama-cpp model once listening: /health answers at once, /ready 200 once it is loaded', async () => {
  const child = spawn(process.execPath, [...MMS, 'serve', '--config', llamaConfig(await tinyLlamaModel())], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const port = await listeningPort(child);
    assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
    let body: { ready: boolean; models: Array<{ backends: Array<{ state: string }> }> };
    for (;;) {
      const response = await fetch(`http://127.0.0.1:${port}/ready`);
      body = (await response.json()) as typeof body;
      assert.equal(response.status, body.ready ? 200 : 503);
      if (body.ready) break;
      assert.equal(body.models[0]!.backends[0]!.state, 'loading');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(body.models[0]!.backends[0]!.state, 'loaded');
  } finally {
    child.kill('SIGTERM');
  }
  assert.deepEqual(await once(child, 'exit'), [0, null]);
});
