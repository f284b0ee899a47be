/**
 * `clear_tool_uses_20250919` as the public docs describe it (issue 34; call-builder/
 * tool-use-clearing.ts and context-management.ts): the oldest tool results are cleared once the
 * prompt reaches the trigger, all but `keep` (3 by default) and `exclude_tools`, inputs too with
 * `clear_tool_inputs`, and not at all when that clears less than `clear_at_least`; what each
 * application cleared is reported, and the caller's messages are never changed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelPrompt } from '../src/backends/call/model-call.js';
import { CLEARED_RESULT } from '../src/call-builder/tool-use-clearing.js';
import { editedPromptOf, TEST_PROFILE } from './model-call-support.js';

const LONG_RESULT = 'Otters hold hands while they sleep, so that the current does not part them. '.repeat(10);

/** A conversation of `uses` lookups, each answered with a long result, then a question. */
function conversation(uses: number, names: (index: number) => string = () => 'lookup') {
  const messages: unknown[] = [{ role: 'user', content: 'Find out about otters.' }];
  for (let index = 0; index < uses; index += 1) {
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: `toolu_${index}`, name: names(index), input: { query: `otters ${index}` } }],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${index}`, content: `${index}: ${LONG_RESULT}` }],
    });
  }
  return messages;
}

const TOOLS = ['lookup', 'keep_me'].map((name) => ({
  name,
  description: 'Look it up.',
  input_schema: { type: 'object' },
}));

function edit(fields: Record<string, unknown> = {}) {
  return {
    context_management: {
      edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 100 }, ...fields }],
    },
  };
}

/** Each result's text as the model reads it, in order. */
function results(prompt: ModelPrompt): string[] {
  return prompt.turns.flatMap((turn) =>
    turn.parts.flatMap((part) =>
      part.type === 'tool-result' ? part.content.flatMap((inner) => (inner.type === 'text' ? [inner.text] : [])) : [],
    ),
  );
}

function inputs(prompt: ModelPrompt): unknown[] {
  return prompt.turns.flatMap((turn) => turn.parts.flatMap((part) => (part.type === 'tool-call' ? [part.input] : [])));
}

describe('clear_tool_uses', () => {
  test('past its trigger, clears all but the last 3 results and says what it cleared', async () => {
    const messages = conversation(6);
    const edited = await editedPromptOf({ tools: TOOLS, messages, ...edit() });
    const seen = results(edited.prompt);
    assert.deepEqual(seen.slice(0, 3), [CLEARED_RESULT, CLEARED_RESULT, CLEARED_RESULT]);
    assert.deepEqual(
      seen.slice(3).map((text) => text.slice(0, 2)),
      ['3:', '4:', '5:'],
    );
    assert.deepEqual(edited.appliedEdits, [
      {
        type: 'clear_tool_uses_20250919',
        cleared_tool_uses: 3,
        cleared_input_tokens: edited.originalInputTokens - edited.inputTokens,
      },
    ]);
    // Half the results, most of the prompt, are gone.
    assert.ok(
      edited.inputTokens < edited.originalInputTokens * 0.7,
      `${edited.inputTokens} of ${edited.originalInputTokens}`,
    );
    // The inputs stay, and the caller's messages are as they were.
    assert.deepEqual(
      inputs(edited.prompt),
      [0, 1, 2, 3, 4, 5].map((index) => ({ query: `otters ${index}` })),
    );
    assert.match(JSON.stringify(messages), /0: Otters hold hands/);
  });

  test('keep, exclude_tools and clear_tool_inputs choose what is cleared', async () => {
    const messages = conversation(4, (index) => (index === 0 ? 'keep_me' : 'lookup'));
    const kept = await editedPromptOf({
      tools: TOOLS,
      messages,
      ...edit({ keep: { type: 'tool_uses', value: 1 }, exclude_tools: ['keep_me'], clear_tool_inputs: true }),
    });
    assert.deepEqual(
      results(kept.prompt).map((text) => (text === CLEARED_RESULT ? 'cleared' : text.slice(0, 2))),
      ['0:', 'cleared', 'cleared', '3:'],
    );
    assert.deepEqual(inputs(kept.prompt), [{ query: 'otters 0' }, {}, {}, { query: 'otters 3' }]);
    const named = await editedPromptOf({
      tools: TOOLS,
      messages,
      ...edit({ keep: { type: 'tool_uses', value: 0 }, clear_tool_inputs: ['keep_me'] }),
    });
    assert.deepEqual(inputs(named.prompt), [{}, { query: 'otters 1' }, { query: 'otters 2' }, { query: 'otters 3' }]);
  });

  test('below its trigger, or clearing less than clear_at_least, it is not applied', async () => {
    const messages = conversation(5);
    const original = (await editedPromptOf({ tools: TOOLS, messages })).inputTokens;
    for (const fields of [
      { trigger: { type: 'input_tokens', value: original + 1 } },
      { trigger: { type: 'tool_uses', value: 6 } },
      { clear_at_least: { type: 'input_tokens', value: original } },
    ]) {
      const edited = await editedPromptOf({ tools: TOOLS, messages, ...edit(fields) });
      assert.deepEqual(edited.appliedEdits, [], JSON.stringify(fields));
      assert.equal(edited.inputTokens, original);
      assert.ok(!results(edited.prompt).includes(CLEARED_RESULT));
    }
    // Counted in tool uses, it fires at the count given.
    const byUses = await editedPromptOf({
      tools: TOOLS,
      messages,
      ...edit({ trigger: { type: 'tool_uses', value: 5 } }),
    });
    assert.equal(byUses.appliedEdits.length, 1);
  });

  test('by default it fires at 100,000 tokens, or half the window of a smaller model', async () => {
    const messages = conversation(6);
    const unset = { context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] } };
    assert.deepEqual((await editedPromptOf({ tools: TOOLS, messages, ...unset })).appliedEdits, []);
    const small = { ...TEST_PROFILE, contextWindow: 2_000 };
    const edited = await editedPromptOf({ tools: TOOLS, messages, ...unset }, small);
    assert.ok(edited.originalInputTokens >= 1_000, String(edited.originalInputTokens));
    assert.equal(edited.appliedEdits.length, 1);
  });

  test("a server tool's results are cleared too, as they are often the largest", async () => {
    const call = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'code_execution', input: { code: 'print(1)' } };
    const run = {
      type: 'code_execution_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: { type: 'code_execution_result', stdout: LONG_RESULT, stderr: '', return_code: 0, content: [] },
    };
    const edited = await editedPromptOf({
      tools: [{ type: 'code_execution_20250522', name: 'code_execution' }],
      messages: [
        { role: 'user', content: 'Run it.' },
        { role: 'assistant', content: [call, run, { type: 'text', text: 'It printed.' }] },
        { role: 'user', content: 'And now?' },
      ],
      ...edit({ keep: { type: 'tool_uses', value: 0 } }),
    });
    assert.deepEqual(results(edited.prompt), [CLEARED_RESULT]);
  });
});
