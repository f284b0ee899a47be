/** http/auth.ts: which presented keys pass, whatever their length next to the configured ones. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
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
