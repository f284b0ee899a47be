/**
 * The one check of schema-bound output (call/output-check.ts): what passes, and what happens to
 * output that fails. Streamed output that fails is a 502 at once; held output is generated once
 * more within the budget left, and only a second failure is a 502.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ANSWER_SUBJECT,
  checkFormatAnswer,
  checkToolInput,
  settleOutput,
  toolInputSubject,
  type OutputCheck,
  type Regenerated,
} from '../src/backends/call/output-check.js';
import type { OfferedTool } from '../src/backends/call/model-call.js';
import { formatRetryHistory } from '../src/backends/llama-cpp/format-retry.js';

const format = {
  schema: { type: 'object', properties: { n: { type: 'integer', minimum: 5 } }, required: ['n'] },
  where: 'output_config.format.schema',
};

const strictTool: OfferedTool = {
  name: 'measure',
  description: 'Measure.',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false },
  strict: true,
  server: false,
  where: 'tools.0.input_schema',
};

interface Recorded extends OutputCheck<unknown> {
  retries: Array<{ output: string; violation: string; maxTokens: number }>;
}

function formatCheck(held: boolean, second: Regenerated | undefined, remaining = 40): Recorded {
  const retries: Recorded['retries'] = [];
  return {
    check: (text) => checkFormatAnswer(text, format),
    subject: ANSWER_SUBJECT,
    where: format.where,
    held,
    remaining: () => remaining,
    retries,
    regenerate: async (output, violation, maxTokens) => {
      retries.push({ output, violation, maxTokens });
      assert.ok(second, 'no second generation expected');
      return second;
    },
  };
}

const isOutputInvalid = (pattern: RegExp) => (error: Error & { code?: string }) =>
  error.code === 'model_output_invalid' && pattern.test(error.message);

test('a valid answer passes as it is, parsed', async () => {
  assert.deepEqual(await settleOutput('{"n":7}', formatCheck(true, undefined)), {
    text: '{"n":7}',
    value: { n: 7 },
    regenerated: false,
    truncated: false,
  });
});

test('streamed output that fails was seen already: a 502 at once, never generated again', async () => {
  const streamed = formatCheck(false, undefined);
  await assert.rejects(
    settleOutput('{"n":1}', streamed),
    isOutputInvalid(/^the model's answer failed output_config\.format\.schema: \/n must be >= 5$/),
  );
  assert.equal(streamed.retries.length, 0);
});

test('held output that fails is generated once more with the budget left, and the second replaces it', async () => {
  const held = formatCheck(true, { text: '{"n":9}', truncated: false }, 33);
  const settled = await settleOutput('{}', held);
  assert.deepEqual(
    held.retries.map(({ output, maxTokens }) => [output, maxTokens]),
    [['{}', 33]],
  );
  assert.match(held.retries[0]?.violation ?? '', /required property 'n'/);
  assert.deepEqual(settled, { text: '{"n":9}', value: { n: 9 }, regenerated: true, truncated: false });
});

test('held output that fails twice is a 502 saying so', async () => {
  await assert.rejects(
    settleOutput('nope', formatCheck(true, { text: '{"n":2}', truncated: false })),
    isOutputInvalid(/failed output_config\.format\.schema twice: \/n must be >= 5$/),
  );
});

test('a second output cut by the budget is returned unchecked, as truncated', async () => {
  assert.deepEqual(await settleOutput('{}', formatCheck(true, { text: '{"n', truncated: true })), {
    text: '{"n',
    regenerated: true,
    truncated: true,
  });
});

test('with no budget left, held output that fails is a 502 without a second generation', async () => {
  const spent = formatCheck(true, undefined, 0);
  await assert.rejects(
    settleOutput('{}', spent),
    isOutputInvalid(/^the model's answer failed output_config\.format\.schema:/),
  );
  assert.equal(spent.retries.length, 0);
});

test('a tool input must be a JSON object; an empty input is {} where the schema asks for no field', () => {
  const loose = {
    ...strictTool,
    strict: false,
    inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  };
  assert.deepEqual(checkToolInput('', loose), { value: {} });
  assert.deepEqual(checkToolInput('  ', loose), { value: {} });
  assert.deepEqual(checkToolInput('[1]', loose), { violation: 'the input is not a JSON object' });
  assert.match(checkToolInput('{"n":', loose).violation ?? '', /^not JSON/);
  assert.deepEqual(checkToolInput('{"anything":1}', loose), { value: { anything: 1 } });
});

test("a strict tool's input must match its schema; a non-strict tool's must have its required fields, the rest passes as written", () => {
  assert.match(checkToolInput('{"m":1}', strictTool).violation ?? '', /required property 'n'/);
  assert.deepEqual(checkToolInput('{"n":1}', strictTool), { value: { n: 1 } });
  const loose = { ...strictTool, strict: false };
  // Issue 35: a call missing a required field cannot run; one with an unknown field or a wrong type may.
  assert.equal(checkToolInput('{"m":1}', loose).violation, "/ must have required property 'n'");
  assert.equal(checkToolInput('', loose).violation, "/ must have required property 'n'");
  assert.deepEqual(checkToolInput('{"n":"one","m":1}', loose), { value: { n: 'one', m: 1 } });
  // The whole schema where asked (an input generated under a grammar wider than its schema).
  assert.match(checkToolInput('{"n":"one"}', loose, 'schema').violation ?? '', /must be number/);
});

test('a number out of the double range fails every check: it would reach the client as null', async () => {
  // JSON.parse reads 1e999 as Infinity, which Ajv counts as a number.
  assert.equal(checkToolInput('{"n":1e999}', strictTool).violation, 'a number is outside the double range');
  assert.equal(
    checkToolInput('{"deep":[{"x":-1e400}]}', { ...strictTool, strict: false }).violation,
    'a number is outside the double range',
  );
  assert.equal(checkFormatAnswer('{"n":1e999}', format).violation, 'a number is outside the double range');
  await assert.rejects(
    settleOutput('{"n":1e999}', {
      check: (text) => checkToolInput(text, strictTool),
      subject: toolInputSubject('measure'),
      where: strictTool.where,
      held: false,
      remaining: () => 10,
      regenerate: () => Promise.reject(new Error('not held')),
    }),
    isOutputInvalid(
      /^the model's input for the tool "measure" failed tools\.0\.input_schema: a number is outside the double range$/,
    ),
  );
});

test("llama-cpp's format retry replays the answer and the violation after the generated turn", () => {
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
