/**
 * The client's answer retries against a raw HTTP server (raw-messages-support.ts), where stop
 * reasons and usage are exact: truncation, retries that would outgrow the prompt budget, and
 * answers that are not objects.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  answer,
  ask,
  finish,
  frame,
  openStream,
  start,
  toolBlock,
  truncated,
  usage,
  useRawMessagesClient,
} from './raw-messages-support.js';
import type { RawMessagesHandler } from '@model-messages/testing';

const fake = useRawMessagesClient();

describe('truncation, exactly', () => {
  test('a truncated answer is retried once with max_tokens doubled; usage is summed', async () => {
    fake.handlers = [truncated(20), answer(20, 9)];
    const result = await fake.client().structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(
      fake.bodies.map((body) => body.max_tokens),
      [512, 1_024],
    );
    assert.deepEqual([result.usage.inputTokens, result.usage.outputTokens], [40, 521]);
  });

  test('truncated twice is a truncated failure; never a decline', async () => {
    fake.handlers = [truncated(20)];
    const mine = fake.client();
    const result = await mine.structured(ask);
    assert.ok(!result.ok && result.kind === 'truncated', JSON.stringify(result));
    assert.equal(result.maxTokens, 1_024);
    assert.equal(mine.declineCounts().total, 0);
  });

  test('the doubled budget is capped by what the context leaves', async () => {
    // 200k window - 192,000 input - 5k buffer = 3,000: no room to grow past 4,000.
    fake.handlers = [truncated(192_000)];
    const capped = await fake.client().structured({ ...ask, maxTokens: 4_000 });
    assert.ok(!capped.ok && capped.kind === 'truncated', JSON.stringify(capped));
    assert.equal(capped.attempts, 1);
    // 200k - 190,000 - 5k = 5,000: room to grow from 4,000 to 5,000, not to 8,000.
    fake.bodies = [];
    fake.handlers = [truncated(190_000), answer()];
    const grown = await fake.client().structured({ ...ask, maxTokens: 4_000 });
    assert.ok(grown.ok, JSON.stringify(grown));
    assert.deepEqual(
      fake.bodies.map((body) => body.max_tokens),
      [4_000, 5_000],
    );
  });
});

describe('a retry that grows the prompt past its budget is not sent (decision 0009)', () => {
  // (20,000 window - 4,000 max_tokens - 5,000 buffer) x 4 = 44,000 characters: the first request
  // (40,000 of input) fits; replaying 8,000 more characters does not.
  const small = { id: 'mid', tier: 'mid' as const, contextWindow: 20_000, maxOutputTokens: 8_000 };
  const long = { ...ask, model: small, input: 'y'.repeat(40_000), maxTokens: 4_000 };
  const pad = 'x'.repeat(8_000);
  const text =
    (words: string): RawMessagesHandler =>
    (response) => {
      openStream(response);
      response.end(
        start() +
          frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
          frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: words } }) +
          frame({ type: 'content_block_stop', index: 0 }) +
          finish('end_turn', 20, 2_000),
      );
    };
  const writes =
    (input: unknown): RawMessagesHandler =>
    (response) => {
      openStream(response);
      response.end(start() + toolBlock(JSON.stringify(input)) + finish('tool_use', 20, 2_000));
    };
  const notSent =
    /the retry was not sent \(prompt_too_long\): the prompt has \d+ characters; mid allows 44000 = \(20000 window - 4000 max_tokens - 5000 buffer\) x 4/;

  test('a decline with a long text: one request, declined, saying the retry was not sent because of its size', async () => {
    fake.handlers = [text(pad), answer()];
    const result = await fake.client().structured(long);
    assert.ok(!result.ok && result.kind === 'declined', JSON.stringify(result).slice(0, 500));
    assert.equal(fake.bodies.length, 1);
    assert.equal(result.attempts, 1);
    assert.match(result.message, notSent);
  });

  test('an invalid answer or a guardrail rejection too long to replay: one request, the failure kind kept', async () => {
    fake.handlers = [writes({ name: 5, note: pad }), answer()];
    const invalid = await fake.client().structured(long);
    assert.ok(!invalid.ok && invalid.kind === 'invalid', JSON.stringify(invalid).slice(0, 500));
    assert.equal(fake.bodies.length, 1);
    assert.match(invalid.message, notSent);
    fake.bodies = [];
    fake.handlers = [writes({ name: pad }), answer()];
    const rejected = await fake
      .client()
      .structured({ ...long, guardrails: [(value) => (value.name === 'Ada' ? undefined : 'not Ada')] });
    assert.ok(!rejected.ok && rejected.kind === 'rejected', JSON.stringify(rejected).slice(0, 500));
    assert.equal(fake.bodies.length, 1);
    assert.match(rejected.message, notSent);
  });
});

describe('a tool input that is not an object', () => {
  const writes =
    (json: string): RawMessagesHandler =>
    (response) => {
      openStream(response);
      response.end(start() + toolBlock(json) + finish('tool_use', 20, 3));
    };

  test('is an invalid outcome, "/ must be object", with or without the envelope, after its one retry; usage and request ids are kept', async () => {
    for (const insufficientData of [false, true]) {
      for (const json of ['null', '"Ada"', '[1]']) {
        fake.bodies = [];
        fake.handlers = [writes(json)];
        const result = await fake.client().structured({ ...ask, insufficientData });
        assert.ok(
          !result.ok && result.kind === 'invalid',
          `${json}, envelope ${insufficientData}: ${JSON.stringify(result)}`,
        );
        assert.equal(result.violation, '/ must be object');
        assert.deepEqual(result.input, JSON.parse(json));
        assert.match(result.message, /after the one retry$/);
        assert.equal(fake.bodies.length, 2, `${json}, envelope ${insufficientData}: the retry is sent`);
        assert.equal(result.attempts, 2);
        assert.deepEqual(result.requestIds, ['req_1', 'req_2']);
        assert.ok(result.usage.inputTokens >= 40, JSON.stringify(result.usage));
      }
    }
  });

  test('is retried once, replayed as {} with the value it wrote quoted in the error result; a valid second answer is used', async () => {
    for (const json of ['null', '"Ada"', '[1]']) {
      fake.bodies = [];
      fake.handlers = [writes(json), answer()];
      const result = await fake.client().structured(ask);
      assert.ok(result.ok, `${json}: ${JSON.stringify(result)}`);
      assert.deepEqual(result.value, { name: 'Ada' });
      assert.equal(fake.bodies.length, 2, json);
      const [call, reply] = (
        fake.bodies[1]!.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>
      ).slice(-2);
      assert.deepEqual(call?.content[0], { type: 'tool_use', id: 'toolu_1', name: 'record_answer', input: {} });
      assert.equal(reply?.content[0]?.is_error, true);
      assert.ok(
        String(reply?.content[0]?.content).includes(`The input you wrote was ${json}, not an object`),
        String(reply?.content[0]?.content),
      );
    }
  });
});
