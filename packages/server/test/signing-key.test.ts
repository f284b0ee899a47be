/**
 * Where the signing key comes from: the config's signingKey (checked, the error naming the
 * field), a key file made once in the data folder and read at every later start, or a random
 * key when neither is given. Every data folder here is a temp folder, never the home folder's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, validateConfig } from '@model-messages/server';
import { resolveSigningKey } from '../src/signing/signing-key.js';
import { Signer } from '../src/signing/signer.js';

const model = {
  id: 'm',
  tier: 'mid',
  generation: 'newer',
  contextWindow: 1000,
  maxOutputTokens: 100,
  backend: { type: 'scripted' },
};

function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  throw new Error('expected a ConfigError');
}

test('a signingKey under 32 characters is a config error naming the field; one of 32 is its UTF-8 bytes', () => {
  assert.equal(
    failure(() => validateConfig({ models: [model], signingKey: 'k'.repeat(31) }, 'test.json')),
    'config test.json: signingKey: must have at least 32 characters',
  );
  assert.equal(
    failure(() => resolveSigningKey({ signingKey: 'k'.repeat(31) })),
    'signingKey: must have at least 32 characters',
  );
  assert.deepEqual(resolveSigningKey({ signingKey: 'k'.repeat(32) }), {
    current: Buffer.from('k'.repeat(32)),
    retired: [],
  });
  assert.deepEqual(
    resolveSigningKey({ signingKey: 'k'.repeat(32), dataFolder: '/nonexistent/never-made' }).current,
    Buffer.from('k'.repeat(32)),
    'the key in the config wins: no key file is read or made',
  );
});

test('the key file is made once, with its folder, readable by its owner only, and read at every later start', () => {
  const folder = join(mkdtempSync(join(tmpdir(), 'mms-key-')), 'nested', 'data');
  const first = resolveSigningKey({ dataFolder: folder }).current;
  assert.equal(first.byteLength, 32);
  const file = join(folder, 'signing-key');
  const written = readFileSync(file, 'utf8');
  assert.equal(written, `${first.toString('base64')}\n`);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(resolveSigningKey({ dataFolder: folder }).current, first);
  assert.equal(readFileSync(file, 'utf8'), written, 'not written again');
});

test('a key file that holds no key, or cannot be read, stops the start with a message naming it', () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-key-'));
  const file = join(folder, 'signing-key');
  for (const text of ['', 'short\n', `${Buffer.alloc(31).toString('base64')}\n`, `${'A'.repeat(43)}=\nmore\n`]) {
    writeFileSync(file, text);
    assert.match(
      failure(() => resolveSigningKey({ dataFolder: folder })),
      new RegExp(`^signing key file ${file}: it does not hold a key \\(32 bytes in base64 on one line\\)`),
      JSON.stringify(text),
    );
    assert.equal(readFileSync(file, 'utf8'), text, 'never replaced');
  }
  const unreadable = mkdtempSync(join(tmpdir(), 'mms-key-'));
  mkdirSync(join(unreadable, 'signing-key'));
  assert.equal(
    failure(() => resolveSigningKey({ dataFolder: unreadable })),
    `signing key file ${join(unreadable, 'signing-key')}: cannot read it (EISDIR)`,
  );
});

test('with neither a key nor a data folder, each app gets a random key of its own', () => {
  const one = resolveSigningKey({}).current;
  assert.equal(one.byteLength, 32);
  assert.notDeepEqual(resolveSigningKey({}).current, one);
});

test("dataFolder is relative to the config file's folder; MMS_DATA_FOLDER, relative to the working folder, wins", () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-key-config-'));
  const path = join(folder, 'mms.json');
  writeFileSync(path, JSON.stringify({ models: [model], dataFolder: 'state' }));
  assert.equal(loadConfig(path).config.dataFolder, join(folder, 'state'));
  assert.equal(loadConfig(path, { dataFolder: 'elsewhere' }).config.dataFolder, join(process.cwd(), 'elsewhere'));
  assert.equal(validateConfig({ models: [model] }, 'test.json').dataFolder, undefined, 'no default: serve applies one');
});

test('a list of keys rotates: the first signs, the rest only verify; each is checked, naming its place', () => {
  const [next, old] = ['n'.repeat(32), 'o'.repeat(32)];
  assert.deepEqual(resolveSigningKey({ signingKey: [next, old] }), {
    current: Buffer.from(next),
    retired: [Buffer.from(old)],
  });
  assert.equal(
    failure(() => resolveSigningKey({ signingKey: [next, 'short'] })),
    'signingKey.1: must have at least 32 characters',
  );
  assert.equal(
    failure(() => validateConfig({ models: [model], signingKey: [] }, 'test.json')),
    'config test.json: signingKey: a list needs at least one key',
  );
  const before = new Signer(Buffer.from(old));
  const during = new Signer(Buffer.from(next), [Buffer.from(old)]);
  const after = new Signer(Buffer.from(next));
  const signedBefore = before.tag('thinking-signature/1', ['words']);
  assert.ok(during.verifies(signedBefore, 'thinking-signature/1', ['words']), 'the old key still verifies');
  assert.equal(during.tag('thinking-signature/1', ['words']), after.tag('thinking-signature/1', ['words']));
  assert.equal(after.verifies(signedBefore, 'thinking-signature/1', ['words']), false, 'once it is dropped, no more');
});
