/**
 * `mms keys new --id X` as a user runs it: a random key printed once and the config entry with
 * its hash, which `mms serve` then takes (without any plain key) and answers the key by; and a
 * bad key entry or limit stops `mms serve` naming the field, exit 2.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listeningPort, MMS } from './mms-command.js';

const folder = mkdtempSync(join(tmpdir(), 'mms-cli-keys-'));
const environment = { ...process.env, MMS_DATA_FOLDER: folder, MMS_API_KEYS: '' };
const MODEL = {
  id: 'm',
  tier: 'mid',
  generation: 'newer',
  contextWindow: 4096,
  maxOutputTokens: 256,
  backend: { type: 'scripted' },
};

function newKey(id: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [...MMS, 'keys', 'new', '--id', id], { encoding: 'utf8', env: environment });
}

function configFile(name: string, config: unknown): string {
  const path = join(folder, name);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

test('mms keys new prints a fresh key once and its entry; mms serve takes the entry and answers the key by its id', async () => {
  const first = newKey('team-a');
  assert.equal(first.status, 0, first.stderr);
  const key = first.stdout.match(/^ {2}(mms-[A-Za-z0-9_-]{43})$/m)?.[1];
  assert.ok(key, first.stdout);
  const entry = JSON.parse(first.stdout.match(/^ {2}(\{.*\})$/m)![1]!) as { id: string; hash: string };
  assert.deepEqual(entry, { id: 'team-a', hash: `sha256:${createHash('sha256').update(key).digest('hex')}` });
  assert.notEqual(newKey('team-a').stdout.match(/mms-\S+/)?.[0], key, 'each key is new');

  const config = configFile('keys.json', {
    listen: { port: 0 },
    models: [MODEL],
    keys: [{ ...entry, limits: { requestsPerMinute: 5 } }],
  });
  const child = spawn(process.execPath, [...MMS, 'serve', '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: environment,
  });
  try {
    const port = await listeningPort(child);
    const ask = (apiKey: string) =>
      fetch(`http://127.0.0.1:${port}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      });
    const answered = await ask(key);
    assert.equal(answered.status, 200);
    assert.equal(answered.headers.get('anthropic-ratelimit-requests-remaining'), '4');
    assert.equal((await ask(entry.hash)).status, 401, 'the hash is not a key');
  } finally {
    child.kill('SIGTERM');
  }
  await once(child, 'exit');
});

test('an id the config would refuse is refused by mms keys new, exit 2', () => {
  const result = newKey('not an id');
  assert.equal(result.status, 2);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^mms: --id: must be 1 to 64 letters/);
});

test('a bad key entry or limit stops mms serve naming the field, exit 2', async () => {
  const hash = `sha256:${'0'.repeat(64)}`;
  const cases: Array<[unknown, RegExp]> = [
    [{ id: 'a', hash: 'bcrypt:$2b$10$abc' }, /keys\.0\.hash: unknown hash format "bcrypt"/],
    [
      { id: 'a', hash, limits: { inputTokensPerMinute: 0 } },
      /keys\.0\.limits\.inputTokensPerMinute: must be a positive integer/,
    ],
    [{ id: 'a', hash, limits: { concurrent: 2.5 } }, /keys\.0\.limits\.concurrent: must be a positive integer/],
    [{ hash }, /keys\.0\.id:/],
  ];
  const runs = cases.map(([entry], index) => {
    const config = configFile(`bad-${index}.json`, { models: [MODEL], keys: [entry] });
    const child = spawn(process.execPath, [...MMS, 'serve', '--config', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: environment,
      // A run that serves instead of stopping is killed rather than left to hang the test.
      timeout: 60_000,
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    return once(child, 'close').then(([status]) => ({ status: status as number | null, stderr }));
  });
  const results = await Promise.all(runs);
  results.forEach((result, index) => {
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, cases[index]![1]);
  });
});
