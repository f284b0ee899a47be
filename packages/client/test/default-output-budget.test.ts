/**
 * A tier's default output budget on a window too small for the spec's default (issue 32): capped
 * to three quarters of what the window leaves after the buffer, and the profile says so. A
 * `max_tokens` the caller gives is never capped.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, PreSendError } from '@model-messages/client';
import { answer, ask, useRawMessagesClient } from './raw-messages-support.js';

const fake = useRawMessagesClient();

/** examples/scripted.json's small model as a client that knows its window but not its output limit. */
const exampleSmall = { id: 'mms-small', contextWindow: 32_768 };

describe('the default output budget fits the window (issue 32)', () => {
  test("a 32,768-token window caps the small tier's 64,000 to 20,826, and the profile says why", () => {
    const client = fake.client({ models: { small: exampleSmall, mid: 'mid', large: 'large' } });
    const small = client.model('small');
    assert.equal(small.defaultMaxTokens, 20_826);
    assert.deepEqual(small.defaultMaxTokensReason, {
      limitedBy: 'context-window',
      explanation:
        "three quarters of the 32768-token window - 5000 buffer = 27768, so that 6942 tokens (27768 characters) stay for the prompt; the small tier's default of 64000 would leave 0",
    });
  });

  test("the spec's defaults on the spec's windows are untouched; a lower model limit is named as such", () => {
    const client = fake.client({
      models: {
        small: { id: 'small', maxOutputTokens: 8_192 },
        mid: { id: 'mid', contextWindow: 1_000_000 },
        large: { id: 'large', contextWindow: 200_000 },
      },
    });
    assert.deepEqual(
      (['small', 'mid', 'large'] as const).map((tier) => {
        const model = client.model(tier);
        return [tier, model.defaultMaxTokens, model.defaultMaxTokensReason.limitedBy];
      }),
      [
        ['small', 8_192, 'model-limit'],
        ['mid', 64_000, 'tier-default'],
        ['large', 128_000, 'tier-default'],
      ],
    );
  });

  test('a structured call on that small model goes out with the capped budget instead of being refused', async () => {
    fake.handlers = [answer()];
    const client = fake.client({ models: { small: exampleSmall, mid: 'mid', large: 'large' } });
    const result = await client.structured({ ...ask, maxTokens: undefined, model: 'small' });
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(fake.bodies[0]?.max_tokens, 20_826);
  });

  test('a max_tokens the caller gives is not capped: over the window it is still refused before sending', async () => {
    const client = fake.client({ models: { small: exampleSmall, mid: 'mid', large: 'large' } });
    await assert.rejects(
      client.structured({ ...ask, maxTokens: 30_000, model: 'small' }),
      (error: unknown) =>
        error instanceof PreSendError &&
        error.code === 'prompt_too_long' &&
        /mms-small allows 0 = \(32768 window - 30000 max_tokens - 5000 buffer\) x 4/.test(error.message),
    );
    assert.equal(fake.bodies.length, 0);
  });

  test("the buffer is the client's: a larger one leaves less for the default", () => {
    const client = new Client({
      baseURL: 'http://127.0.0.1:1',
      apiKey: 'k',
      models: { small: exampleSmall, mid: 'mid', large: 'large' },
      bufferTokens: 12_768,
    });
    // Three quarters of 32,768 - 12,768 = 20,000.
    assert.equal(client.model('small').defaultMaxTokens, 15_000);
    assert.equal(client.model({ id: 'candidate', tier: 'small', contextWindow: 32_768 }).defaultMaxTokens, 15_000);
  });
});
