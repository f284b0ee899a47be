/**
 * The check of an `output_config.format` answer at the end of a step: streamed (guided) output
 * that fails is a 502 at once; a held one is asked for once more within the budget left, and only
 * a second failure is a 502.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkFormatAnswer, formatRetryHistory, type FormatCheck } from '../src/backends/llama-cpp/format-answer.js';
import type { CollectedText } from '../src/backends/llama-cpp/collect-text.js';

const target = {
  schema: { type: 'object', properties: { n: { type: 'integer', minimum: 5 } }, required: ['n'] },
  strict: false,
  kind: 'format',
  where: 'output_config.format.schema',
} as const;

function check(
  held: boolean,
  second: CollectedText | undefined,
  remaining = 40,
): FormatCheck & { retries: Array<{ answer: string; violation: string; maxTokens: number }> } {
  const retries: Array<{ answer: string; violation: string; maxTokens: number }> = [];
  return {
    target,
    held,
    remaining: () => remaining,
    retries,
    retry: async (answer, violation, maxTokens) => {
      retries.push({ answer, violation, maxTokens });
      assert.ok(second, 'no retry expected');
      return second;
    },
  };
}

const isOutputInvalid = (pattern: RegExp) => (error: Error & { code?: string }) =>
  error.code === 'model_output_invalid' && pattern.test(error.message);

test('a valid answer passes as it is', async () => {
  assert.deepEqual(await checkFormatAnswer('{"n":7}', check(true, undefined)), {
    replacement: undefined,
    stopReason: 'end_turn',
  });
});

test('a guided answer that fails was streamed already: a 502 at once, no retry', async () => {
  const guided = check(false, undefined);
  await assert.rejects(
    checkFormatAnswer('{"n":1}', guided),
    isOutputInvalid(/^grammar-constrained output failed output_config\.format\.schema/),
  );
  assert.equal(guided.retries.length, 0);
});

test('a held answer that fails is asked for once more with the budget left, and the second answer replaces it', async () => {
  const held = check(true, { text: '{"n":9}', truncated: false }, 33);
  const outcome = await checkFormatAnswer('{}', held);
  assert.equal(held.retries.length, 1);
  assert.equal(held.retries[0]?.answer, '{}');
  assert.equal(held.retries[0]?.maxTokens, 33);
  assert.match(held.retries[0]?.violation ?? '', /required property 'n'/);
  assert.equal(outcome.stopReason, 'end_turn');
  assert.deepEqual(outcome.replacement, [
    { type: 'block-start', block: { type: 'text', text: '', citations: null } },
    { type: 'block-delta', delta: { type: 'text_delta', text: '{"n":9}' } },
    { type: 'block-stop' },
  ]);
});

test('a held answer that fails twice is a 502 saying so', async () => {
  await assert.rejects(
    checkFormatAnswer('nope', check(true, { text: '{"n":2}', truncated: false })),
    isOutputInvalid(/failed output_config\.format\.schema twice: \/n must be >= 5$/),
  );
});

test('a second answer cut by the budget is returned as max_tokens, unchecked', async () => {
  const outcome = await checkFormatAnswer('{}', check(true, { text: '{"n', truncated: true }));
  assert.equal(outcome.stopReason, 'max_tokens');
});

test('with no budget left a failed held answer is a 502 without a retry', async () => {
  const spent = check(true, undefined, 0);
  await assert.rejects(
    checkFormatAnswer('{}', spent),
    isOutputInvalid(/^the model's answer failed output_config\.format\.schema:/),
  );
  assert.equal(spent.retries.length, 0);
});

test('the retry replays the answer and the violation after the generated turn', () => {
  const history = formatRetryHistory(
    [
      { type: 'system', text: 's' },
      { type: 'user', text: 'u' },
      { type: 'model', response: ['{"n":'] },
    ],
    '1}',
    'too small',
  );
  assert.deepEqual(history.slice(0, 2), [
    { type: 'system', text: 's' },
    { type: 'user', text: 'u' },
  ]);
  assert.deepEqual(history[2], { type: 'model', response: ['{"n":', '1}'] });
  assert.match((history[3] as { text: string }).text, /too small/);
  assert.deepEqual(history[4], { type: 'model', response: [] });
});
