/**
 * The config's `keys` and `limits` (config/key-config.ts): a malformed entry, a hash in an unknown
 * format, a limit that is not a positive integer, an id or a key given twice are refused naming
 * the field; a hash is never quoted back, as it may be a key pasted by mistake.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ConfigError, validateConfig } from '@model-messages/server';

const model = {
  id: 'm',
  tier: 'mid',
  generation: 'newer',
  contextWindow: 1000,
  maxOutputTokens: 100,
  backend: { type: 'scripted' },
};
const HASH = `sha256:${'ab'.repeat(32)}`;

function configError(input: Record<string, unknown>): string {
  try {
    validateConfig({ models: [model], ...input }, 'test.json');
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.message;
  }
  throw new Error('expected a ConfigError');
}

test("a key entry gets its defaults; limits default to memory, served on the replica's own count when the store fails", () => {
  const config = validateConfig(
    { models: [model], keys: [{ id: 'team-a', hash: HASH.toUpperCase().replace('SHA256', 'sha256') }] },
    't',
  );
  assert.deepEqual(config.keys, [{ id: 'team-a', hash: HASH, admin: false }]);
  assert.deepEqual(config.limits, { store: { type: 'memory' }, onStoreError: 'allow' });
  const redis = validateConfig(
    { models: [model], limits: { store: { type: 'redis', url: 'redis://10.0.0.5:6379' }, onStoreError: 'refuse' } },
    't',
  );
  assert.deepEqual(redis.limits, {
    store: { type: 'redis', url: 'redis://10.0.0.5:6379', keyPrefix: 'mms:limits:', timeoutMs: 250 },
    onStoreError: 'refuse',
  });
});

test('a hash in an unknown format, or not a hash at all, is refused naming the field and never quoted', () => {
  const pasted = 'mms-this-is-a-key-not-a-hash';
  const unknown = configError({ keys: [{ id: 'a', hash: `md5:${'0'.repeat(32)}` }] });
  assert.match(unknown, /^config test\.json: keys\.0\.hash: unknown hash format "md5": write "sha256:"/);
  const plain = configError({ keys: [{ id: 'a', hash: pasted }] });
  assert.match(plain, /^config test\.json: keys\.0\.hash: not a key hash/);
  assert.ok(!plain.includes(pasted));
  const short = configError({ keys: [{ id: 'a', hash: 'sha256:abc' }] });
  assert.match(short, /keys\.0\.hash: a sha256 hash has 64 hex digits after "sha256:"/);
});

test('a limit that is not a positive integer is refused naming it', () => {
  for (const value of [0, -1, 1.5, '60']) {
    const message = configError({ keys: [{ id: 'a', hash: HASH, limits: { requestsPerMinute: value } }] });
    assert.match(
      message,
      /^config test\.json: keys\.0\.limits\.requestsPerMinute: must be a positive integer/,
      String(value),
    );
  }
  assert.match(
    configError({ keys: [{ id: 'a', hash: HASH, limits: { concurrent: 0 } }] }),
    /keys\.0\.limits\.concurrent: must be a positive integer/,
  );
  assert.match(
    configError({ keys: [{ id: 'a', hash: HASH, limits: { tokensPerMinute: 10 } }] }),
    /keys\.0\.limits\.tokensPerMinute: Extra inputs are not permitted/,
  );
});

test('a quota that is not a positive integer, or a day quota over the month quota, is refused naming the field', () => {
  for (const field of ['tokensPerDay', 'tokensPerMonth'])
    for (const value of [0, 2.5, '1000'])
      assert.match(
        configError({ keys: [{ id: 'q', hash: HASH, limits: { [field]: value } }] }),
        new RegExp(`^config test\\.json: keys\\.0\\.limits\\.${field}: must be a positive integer`),
        `${field} ${String(value)}`,
      );
  assert.match(
    configError({ keys: [{ id: 'q', hash: HASH, limits: { tokensPerDay: 2000, tokensPerMonth: 1000 } }] }),
    /^config test\.json: keys\.0\.limits\.tokensPerDay: must be at most tokensPerMonth/,
  );
  const config = validateConfig(
    { models: [model], keys: [{ id: 'q', hash: HASH, limits: { tokensPerDay: 1000, tokensPerMonth: 20000 } }] },
    't',
  );
  assert.deepEqual(config.keys[0]?.limits, { tokensPerDay: 1000, tokensPerMonth: 20000 });
});

test('a malformed entry is refused naming the field', () => {
  assert.match(configError({ keys: [{ hash: HASH }] }), /keys\.0\.id:/);
  assert.match(configError({ keys: [{ id: 'a b', hash: HASH }] }), /keys\.0\.id: must be 1 to 64 letters/);
  assert.match(configError({ keys: [{ id: 'a', hash: HASH, models: [] }] }), /keys\.0\.models:/);
  assert.match(configError({ keys: [{ id: 'a', hash: HASH, key: 'x' }] }), /keys\.0\.key: Extra inputs/);
  assert.match(configError({ keys: ['plain-key-123'] }), /keys\.0:/);
  assert.match(
    configError({ limits: { store: { type: 'redis', url: 'http://x' } } }),
    /limits\.store\.url: must be a redis:\/\/ or rediss:\/\/ URL/,
  );
  assert.match(configError({ limits: { onStoreError: 'ignore' } }), /limits\.onStoreError:/);
});

test('an id or a key given twice is refused naming both places', () => {
  assert.match(
    configError({
      keys: [
        { id: 'a', hash: HASH },
        { id: 'a', hash: `sha256:${'cd'.repeat(32)}` },
      ],
    }),
    /keys\.1\.id: "a" is also keys\.0's id/,
  );
  assert.match(
    configError({
      keys: [
        { id: 'a', hash: HASH },
        { id: 'b', hash: HASH },
      ],
    }),
    /keys\.1\.hash: the same key as keys\.0/,
  );
  const plain = 'plain-key-0123';
  const plainHash = `sha256:${createHash('sha256').update(plain).digest('hex')}`;
  assert.match(
    configError({ apiKeys: [plain], keys: [{ id: 'a', hash: plainHash }] }),
    /keys\.0\.hash: the same key as apiKeys\.0/,
  );
});
