/** http/auth.ts: which presented keys pass, whatever their length next to the configured ones. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ServiceError } from '@model-messages/protocol';
import { ApiKeyCheck } from '../src/http/auth.js';

const check = new ApiKeyCheck(['first-key-0001', 'second-key-longer-0002']);

function verdict(headers: Record<string, string>): string {
  try {
    check.assertAuthorized(headers);
    return 'accepted';
  } catch (error) {
    assert.ok(error instanceof ServiceError);
    return error.message;
  }
}

test('every configured key is accepted, by x-api-key or Bearer', () => {
  assert.equal(verdict({ 'x-api-key': 'first-key-0001' }), 'accepted');
  assert.equal(verdict({ 'x-api-key': 'second-key-longer-0002' }), 'accepted');
  assert.equal(verdict({ authorization: 'Bearer second-key-longer-0002' }), 'accepted');
});

test('keys of the same length, shorter, longer or sharing a prefix are refused', () => {
  for (const key of [
    'first-key-0002',
    'first-key-000',
    'first-key-00011',
    'second-key-longer-0001',
    'second-key-longer-00021',
    'x',
    '€irst-key-0001',
  ]) {
    assert.equal(verdict({ 'x-api-key': key }), 'invalid x-api-key', key);
  }
});

test('no key at all is told apart from a wrong one', () => {
  assert.equal(verdict({}), 'x-api-key header is required');
  assert.equal(verdict({ authorization: 'Basic Zmlyc3Q=' }), 'x-api-key header is required');
});

test('a key of the config keys is found by its SHA-256 and named by its id; a plain key by its hash prefix', () => {
  const hashed = (key: string) => `sha256:${createHash('sha256').update(key).digest('hex')}`;
  const both = new ApiKeyCheck(
    ['plain-key-0001'],
    [
      { id: 'team-a', hash: hashed('team-a-key-0001'), admin: false, models: ['mid'] },
      { id: 'ops', hash: hashed('ops-key-0001'), admin: true },
    ],
  );
  const teamA = both.assertAuthorized({ 'x-api-key': 'team-a-key-0001' });
  assert.equal(teamA.id, 'team-a');
  assert.equal(teamA.admin, false);
  assert.equal(teamA.models?.allows('mid'), true);
  assert.equal(teamA.models?.allows('large'), false);
  assert.equal(teamA.limits, undefined);
  assert.equal(both.assertAuthorized({ authorization: 'Bearer ops-key-0001' }).admin, true);
  assert.match(both.assertAuthorized({ 'x-api-key': 'plain-key-0001' }).id, /^key-[0-9a-f]{8}$/);
  for (const wrong of ['team-a-key-0002', hashed('team-a-key-0001'), 'ops-key-000', 'plain-key-0002']) {
    assert.throws(() => both.assertAuthorized({ 'x-api-key': wrong }), /invalid x-api-key/, wrong);
  }
});
