/**
 * What the request fields that Claude Code and the 1.x client send make of the model call:
 * system messages at their place (after the results of the calls before them), clear_at,
 * per-turn effort, clear_thinking, deferred tools and tool references, input examples, and the
 * thinking budget each effort gives. docs/compatibility.md has the table.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { thinkingBudget } from '../src/backends/call/thinking-budget.js';
import { toChatHistory } from '../src/backends/llama-cpp/chat-history.js';
import { toChatMessages } from '../src/backends/openai-compatible/chat-messages.js';
import { upstreamMessages } from '../src/backends/messages-upstream/upstream-request.js';
import { hiddenThinking, signThinking, thinkingSignatureVerifies } from '../src/signing/thinking-signature.js';
import { Signer } from '../src/signing/signer.js';
import { callOf, editedPromptOf, promptOf } from './model-call-support.js';

const TOOL = { name: 'lookup', description: 'Look up.', input_schema: { type: 'object' } };
const call = { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} };
const result = { type: 'tool_result', tool_use_id: 'toolu_1', content: 'found' };

describe('system messages', () => {
  test('stand at their place as system turns', () => {
    const prompt = promptOf({
      messages: [
        { role: 'user', content: 'one' },
        { role: 'system', content: 'note' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'three' },
      ],
    });
    assert.deepEqual(
      prompt.turns.map((turn) => turn.role),
      ['user', 'system', 'assistant', 'user'],
    );
    assert.deepEqual(prompt.turns[1]?.parts, [{ type: 'text', text: 'note' }]);
  });

  test('between tool calls and their results, follow the results', () => {
    const prompt = promptOf({
      tools: [TOOL],
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [call] },
        { role: 'system', content: [{ type: 'text', text: 'reminder' }] },
        { role: 'user', content: [result] },
      ],
    });
    assert.deepEqual(
      prompt.turns.map((turn) => turn.role),
      ['user', 'assistant', 'user', 'system'],
    );
  });

  test('with clear_at next_user_message, are shown only until a later user message', () => {
    const body = (tail: Array<Record<string, unknown>>) =>
      promptOf({
        messages: [
          { role: 'user', content: 'one' },
          { role: 'system', content: 'only now', clear_at: 'next_user_message' },
          ...tail,
        ],
      });
    assert.ok(body([]).turns.some((turn) => turn.role === 'system'));
    const later = body([
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'three' },
    ]);
    assert.ok(!later.turns.some((turn) => turn.role === 'system'));
  });

  test('reach every engine at their place', () => {
    const prompt = promptOf({
      system: 'rules',
      messages: [
        { role: 'user', content: 'one' },
        { role: 'system', content: 'note' },
      ],
    });
    const chat = toChatMessages(prompt, { instruction: undefined, reasoningField: undefined, images: true });
    assert.deepEqual(chat, [
      { role: 'system', content: 'rules' },
      { role: 'user', content: 'one' },
      { role: 'system', content: 'note' },
    ]);
    const history = toChatHistory(prompt).history;
    assert.deepEqual(
      history.map((item) => item.type),
      ['system', 'user', 'system', 'model'],
    );
    assert.deepEqual(upstreamMessages(prompt.turns), [
      { role: 'user', content: [{ type: 'text', text: 'one' }] },
      { role: 'system', content: [{ type: 'text', text: 'note' }] },
    ]);
  });

  test('the last system message that sets an effort sets the turn', () => {
    const messages = [
      { role: 'user', content: 'one' },
      { role: 'system', output_config: { effort: 'low' } },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'three' },
      { role: 'system', content: 'note', output_config: { effort: 'max' } },
    ];
    assert.equal(promptOf({ messages, output_config: { effort: 'medium' } }).thinking.effort, 'max');
    assert.equal(
      promptOf({ messages: messages.slice(0, 4), output_config: { effort: 'medium' } }).thinking.effort,
      'low',
    );
    assert.equal(
      promptOf({ messages: messages.slice(0, 1), output_config: { effort: 'medium' } }).thinking.effort,
      'medium',
    );
  });
});

describe('thinking', () => {
  test('effort scales the thinking share; budget_tokens caps it', () => {
    const budget = (effort: string | undefined, thinking: Record<string, unknown> = { type: 'adaptive' }) =>
      thinkingBudget(
        callOf({
          max_tokens: 10_000,
          messages: [{ role: 'user', content: 'x' }],
          thinking,
          ...(effort ? { output_config: { effort } } : {}),
        }),
        0.5,
      );
    assert.equal(budget(undefined), 5000);
    assert.equal(budget('high'), 5000);
    assert.equal(budget('low'), 1250);
    assert.equal(budget('medium'), 2500);
    assert.equal(budget('xhigh'), 7500);
    assert.equal(budget('max'), 9000);
    assert.equal(budget('max', { type: 'enabled', budget_tokens: 2000 }), 2000);
  });

  test('clear_thinking keeps the thinking of the last turns asked, and all by default', async () => {
    const thought = (text: string) => ({ type: 'thinking', thinking: text, signature: 's' });
    const messages = [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: [thought('first'), { type: 'text', text: 'a' }] },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: [thought('second'), { type: 'text', text: 'b' }] },
      { role: 'user', content: 'three' },
    ];
    const thoughts = async (contextManagement: unknown) =>
      (
        await editedPromptOf({ messages, ...(contextManagement ? { context_management: contextManagement } : {}) })
      ).prompt.turns.flatMap((turn) => turn.parts.flatMap((part) => (part.type === 'thinking' ? [part.text] : [])));
    assert.deepEqual(await thoughts(undefined), ['first', 'second']);
    assert.deepEqual(await thoughts({ edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] }), [
      'first',
      'second',
    ]);
    assert.deepEqual(await thoughts({ edits: [{ type: 'clear_thinking_20251015' }] }), ['second']);
    assert.deepEqual(
      await thoughts({ edits: [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 2 } }] }),
      ['first', 'second'],
    );
    // What was cleared is reported (issue 34): one turn's thinking, and the tokens it took.
    const edited = await editedPromptOf({
      messages,
      context_management: { edits: [{ type: 'clear_thinking_20251015' }] },
    });
    assert.equal(edited.appliedEdits.length, 1);
    assert.equal(edited.appliedEdits[0]!.type, 'clear_thinking_20251015');
    assert.ok(edited.appliedEdits[0]!.cleared_input_tokens > 0);
    assert.equal(edited.originalInputTokens - edited.inputTokens, edited.appliedEdits[0]!.cleared_input_tokens);
  });

  test('an omitted block keeps its text in its signature, under the same tag', () => {
    const signer = new Signer(new Uint8Array(32).fill(7));
    const signature = signThinking(signer, 'secret thought', 'inner', true);
    assert.match(signature, /^mms1h\./);
    assert.equal(hiddenThinking(signature), 'secret thought');
    assert.ok(thinkingSignatureVerifies(signer, '', signature));
    assert.ok(thinkingSignatureVerifies(signer, 'secret thought', signature));
    assert.equal(thinkingSignatureVerifies(signer, 'other thought', signature), false);
    const forged = signature.replace(
      Buffer.from('secret thought').toString('base64url'),
      Buffer.from('forged').toString('base64url'),
    );
    assert.equal(thinkingSignatureVerifies(signer, '', forged), false);
    // The model reads the kept text again when the omitted block comes back.
    const prompt = promptOf({
      messages: [
        { role: 'user', content: 'one' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: '', signature },
            { type: 'text', text: 'a' },
          ],
        },
        { role: 'user', content: 'two' },
      ],
    });
    const part = prompt.turns[1]?.parts[0];
    assert.equal(part?.type === 'thinking' ? part.text : undefined, 'secret thought');
  });
});

describe('tools', () => {
  const deferred = { name: 'rare', description: 'Rarely used.', input_schema: { type: 'object' }, defer_loading: true };

  test('a deferred tool is offered once a tool_reference loads it, or tool_choice forces it', () => {
    const names = (body: Record<string, unknown>) => promptOf(body).tools.map((tool) => tool.name);
    assert.deepEqual(names({ tools: [TOOL, deferred], messages: [{ role: 'user', content: 'x' }] }), ['lookup']);
    const loaded = {
      tools: [TOOL, deferred],
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [call] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'tool_reference', tool_name: 'rare' }] },
          ],
        },
      ],
    };
    assert.deepEqual(names(loaded), ['lookup', 'rare']);
    assert.deepEqual(
      names({
        tools: [TOOL, deferred],
        tool_choice: { type: 'tool', name: 'rare' },
        messages: [{ role: 'user', content: 'x' }],
      }),
      ['lookup', 'rare'],
    );
    // The model reads that the tool is there now.
    const resultPart = promptOf(loaded).turns[2]?.parts[0];
    assert.equal(resultPart?.type, 'tool-result');
    assert.deepEqual(resultPart?.type === 'tool-result' ? resultPart.content : undefined, [
      { type: 'text', text: 'Tool "rare" is now available.' },
    ]);
  });

  test('input_examples reach the model with the description', () => {
    const prompt = promptOf({
      tools: [{ ...TOOL, input_examples: [{ word: 'cat' }] }],
      messages: [{ role: 'user', content: 'x' }],
    });
    assert.equal(prompt.tools[0]?.description, 'Look up.\n\nExamples of input:\n{"word":"cat"}');
  });
});

describe("Claude Code's billing header", () => {
  test('is left out of the system prompt every engine sees; text that only mentions it is kept', () => {
    const prompt = promptOf({
      system: [
        { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.467; cc_entrypoint=sdk-cli;' },
        { type: 'text', text: 'You are an agent.' },
        { type: 'text', text: 'Quote it: x-anthropic-billing-header: cc_version=1;' },
      ],
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.deepEqual(
      prompt.system.map((part) => part.text),
      ['You are an agent.', 'Quote it: x-anthropic-billing-header: cc_version=1;'],
    );
  });
});
