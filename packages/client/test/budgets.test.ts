import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultOutputBudget, maxPromptChars, outputTokensToFit } from '@model-messages/client';
import {
  BUFFER_TOKENS,
  DEFAULT_OUTPUT_TOKENS,
  fetchContentTokens,
  keptContextWindow,
  outputBudgetGrowth,
} from '../src/budgets.js';

test('the spec defaults: 64k small and mid, 128k large, a 5k buffer', () => {
  assert.deepEqual(DEFAULT_OUTPUT_TOKENS, { small: 64_000, mid: 64_000, large: 128_000 });
  assert.equal(BUFFER_TOKENS, 5_000);
});

test('the mid tier keeps 200k of its 1M window; other tiers keep theirs', () => {
  assert.equal(keptContextWindow('mid', 1_000_000), 200_000);
  assert.equal(keptContextWindow('mid', 150_000), 150_000);
  assert.equal(keptContextWindow('large', 1_000_000), 1_000_000);
});

test('max prompt chars = (window - max output - buffer) x 4, with the spec numbers', () => {
  // Mid tier: 200k kept, 64k out, 5k buffer -> 131k tokens -> 524,000 characters.
  assert.equal(
    maxPromptChars({ contextWindow: keptContextWindow('mid', 1_000_000), maxOutputTokens: 64_000 }),
    524_000,
  );
  // Large tier on a 200k window with 128k out: 67k tokens -> 268,000 characters.
  assert.equal(maxPromptChars({ contextWindow: 200_000, maxOutputTokens: 128_000 }), 268_000);
  assert.equal(maxPromptChars({ contextWindow: 200_000, maxOutputTokens: 64_000, bufferTokens: 0 }), 544_000);
  assert.equal(
    maxPromptChars({ contextWindow: 4_096, maxOutputTokens: 2_048 }),
    0,
    'no room at all is 0, never negative',
  );
});

test('the default output budget: the tier default, the model limit, or three quarters of the window after the buffer (issue 32)', () => {
  const budget = (tier: 'small' | 'large', keptWindow: number, maxOutputTokens: number) =>
    defaultOutputBudget({ tier, keptWindow, maxOutputTokens });
  assert.deepEqual(
    [budget('large', 200_000, 128_000), budget('small', 200_000, 8_192), budget('small', 8_000, 64_000)].map(
      ({ tokens, limitedBy }) => [tokens, limitedBy],
    ),
    [
      [128_000, 'tier-default'],
      [8_192, 'model-limit'],
      [2_250, 'context-window'],
    ],
  );
  // A window the buffer fills leaves nothing: 1 token, and the prompt check refuses any prompt.
  assert.deepEqual(budget('small', 5_001, 64_000), {
    tokens: 1,
    limitedBy: 'context-window',
    explanation:
      'the 5001-token window - 5000 buffer = 1 leaves no room for output and prompt; 1 token, and the prompt check refuses any prompt',
  });
  assert.equal(maxPromptChars({ contextWindow: 5_001, maxOutputTokens: 1 }), 0);
});

test('shrinking to fit: the tier budget, cut to what the context leaves after the prompt and the buffer', () => {
  assert.equal(outputTokensToFit({ tierBudget: 64_000, contextWindow: 200_000, promptChars: 4_000 }), 64_000);
  // 8k window - 1k prompt tokens - 5k buffer = 2,000.
  assert.equal(outputTokensToFit({ tierBudget: 64_000, contextWindow: 8_000, promptChars: 4_000 }), 2_000);
  assert.equal(
    outputTokensToFit({ tierBudget: 64_000, contextWindow: 8_000, promptChars: 4_001, bufferTokens: 0 }),
    6_999,
  );
  assert.equal(
    outputTokensToFit({ tierBudget: 64_000, contextWindow: 8_000, promptChars: 12_000 }),
    64_000,
    'no room at all: the tier budget, which the prompt check refuses, saying why',
  );
});

test('the fetch headroom after the prompt is divided across the allowed fetches', () => {
  // 200k - 4,000 chars / 4 (1k tokens) - 128k - 5k = 66k tokens, over 5 fetches.
  assert.equal(
    fetchContentTokens({ contextWindow: 200_000, maxOutputTokens: 128_000, promptChars: 4_000, maxUses: 5 }),
    13_200,
  );
  assert.equal(
    fetchContentTokens({ contextWindow: 200_000, maxOutputTokens: 64_000, promptChars: 0, maxUses: 1 }),
    131_000,
  );
  assert.equal(fetchContentTokens({ contextWindow: 10_000, maxOutputTokens: 8_000, promptChars: 0, maxUses: 5 }), 0);
});

test('a truncated budget doubles, capped by the model limit and by what the context leaves', () => {
  const limits = { modelMaxOutputTokens: 64_000, contextWindow: 200_000, inputTokens: 1_000 };
  const next = (current: number, at: Parameters<typeof outputBudgetGrowth>[1]) => outputBudgetGrowth(current, at).next;
  assert.equal(next(512, limits), 1_024);
  assert.equal(next(40_000, limits), 64_000, 'model limit');
  assert.equal(next(64_000, limits), undefined, 'already at the model limit');
  assert.equal(
    next(40_000, { ...limits, modelMaxOutputTokens: 128_000, inputTokens: 150_000 }),
    45_000,
    'context: 200k - 150k - 5k buffer',
  );
  assert.equal(next(50_000, { ...limits, modelMaxOutputTokens: 128_000, inputTokens: 150_000 }), undefined);
});
