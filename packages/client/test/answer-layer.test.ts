import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContentBlock, Message, MessageRequest, StopReason } from '@mms/protocol';
import { answerRetry } from '../src/answer/answer-retry.js';
import { classifyAnswer } from '../src/answer/classify-answer.js';
import { DeclineCounter } from '../src/answer/decline-counter.js';
import { resolveModel } from '../src/client-options.js';

const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 5 }, born: { type: 'string', format: 'date' } }, required: ['name'], additionalProperties: false };
const message = (content: ContentBlock[], stopReason: StopReason): Message => ({ id: 'msg', type: 'message', role: 'assistant', model: 'mid', content, stop_reason: stopReason, stop_sequence: null, stop_details: null, container: null, diagnostics: null, usage: { input_tokens: 1_000, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: null, server_tool_use: null, service_tier: 'standard', inference_geo: null, output_tokens_details: null, speed: null } });
const folded = (content: ContentBlock[], stopReason: StopReason, unparsed: [string, string][] = []) => ({ message: message(content, stopReason), unparsedInputs: new Map(unparsed) });
const call = (input: Record<string, unknown>): ContentBlock => ({ type: 'tool_use', id: 'toolu_1', name: 'emit', input, caller: { type: 'direct' } });
const text = (value: string): ContentBlock => ({ type: 'text', text: value, citations: null });

describe('classifying a 2xx response', () => {
  test('a valid tool input is the answer', () => {
    assert.deepEqual(classifyAnswer(folded([call({ name: 'Ada', born: '1815-12-10' })], 'tool_use'), 'emit', schema), { kind: 'answer', value: { name: 'Ada', born: '1815-12-10' }, toolUse: call({ name: 'Ada', born: '1815-12-10' }) });
  });

  test('truncation comes before everything: a cut-off response without its tool call is no decline', () => {
    assert.equal(classifyAnswer(folded([text('I will call')], 'max_tokens'), 'emit', schema).kind, 'truncated');
    assert.equal(classifyAnswer(folded([call({})], 'max_tokens', [['toolu_1', '{"na']]), 'emit', schema).kind, 'truncated');
  });

  test('no call of the output tool is a decline carrying the text, even when the text is broken JSON', () => {
    assert.deepEqual(classifyAnswer(folded([text('{"name": "Ad')], 'end_turn'), 'emit', schema), { kind: 'declined', text: '{"name": "Ad', stopReason: 'end_turn' });
    assert.equal(classifyAnswer(folded([{ ...call({ name: 'Ada' }), name: 'other' } as ContentBlock], 'tool_use'), 'emit', schema).kind, 'declined');
  });

  test('constraints the strict schema could not carry are enforced here: maxLength, format, extra fields', () => {
    const outcome = (input: Record<string, unknown>) => classifyAnswer(folded([call(input)], 'tool_use'), 'emit', schema);
    assert.deepEqual(outcome({ name: 'Adelaide' }).kind === 'invalid' && outcome({ name: 'Adelaide' }), { kind: 'invalid', violation: '/name must NOT have more than 5 characters', toolUse: call({ name: 'Adelaide' }) });
    assert.match(JSON.stringify(outcome({ name: 'Ada', born: '1815-13-45' })), /must match format \\"date\\"/);
    assert.equal(outcome({ name: 'Ada', extra: 1 }).kind, 'invalid');
  });

  test('tool input that is not JSON is invalid, not declined', () => {
    const outcome = classifyAnswer(folded([call({})], 'tool_use', [['toolu_1', '{"name": Ada}']]), 'emit', schema);
    assert.equal(outcome.kind, 'invalid');
    assert.match(outcome.kind === 'invalid' ? outcome.violation : '', /not valid JSON/);
  });
});

describe('the answer layer\'s one retry', () => {
  const model = resolveModel('mid', { id: 'mid', contextWindow: 200_000, maxOutputTokens: 64_000 });
  const request: MessageRequest = {
    model: 'mid',
    max_tokens: 512,
    system: 'Extract.',
    messages: [{ role: 'user', content: 'Ada Lovelace' }],
    tools: [{ name: 'emit', description: 'd', strict: true, input_schema: { type: 'object' } }],
    tool_choice: { type: 'tool', name: 'emit', disable_parallel_tool_use: true },
  };
  const limits = { model, bufferTokens: 5_000, inputTokens: 1_000 };

  test('truncated: max_tokens doubled, nothing else changed', () => {
    const plan = answerRetry(request, { kind: 'truncated' }, 'emit', limits);
    assert.deepEqual(plan?.request, { ...request, max_tokens: 1_024 });
    assert.equal(answerRetry({ ...request, max_tokens: 64_000 }, { kind: 'truncated' }, 'emit', limits), undefined, 'at the model limit: no retry');
  });

  test('declined: text replayed as an assistant turn, a user turn asks for the tool, the tool stays forced', () => {
    const plan = answerRetry(request, { kind: 'declined', text: 'Her name is Ada.', stopReason: 'end_turn' }, 'emit', limits);
    assert.deepEqual(plan?.request.messages.slice(1), [{ role: 'assistant', content: 'Her name is Ada.' }, { role: 'user', content: 'You answered without calling the tool "emit". Call it now, with your answer as its input.' }]);
    assert.deepEqual(plan?.request.tool_choice, request.tool_choice);
    assert.equal(plan?.request.max_tokens, 512);
  });

  test('invalid: the call replayed and answered by an error result naming the violation', () => {
    const toolUse = call({ name: 'Adelaide' });
    const plan = answerRetry(request, { kind: 'invalid', violation: '/name must NOT have more than 5 characters', toolUse: toolUse as Extract<ContentBlock, { type: 'tool_use' }> }, 'emit', limits);
    assert.deepEqual(plan?.request.messages.slice(1), [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'emit', input: { name: 'Adelaide' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'The input failed validation: /name must NOT have more than 5 characters. Call "emit" again with input that satisfies its schema.' }] },
    ]);
  });
});

test('declines are counted per model and per tool', () => {
  const counter = new DeclineCounter();
  counter.count('mid', 'emit');
  counter.count('mid', 'emit');
  counter.count('small', '__proto__');
  assert.deepEqual(counter.snapshot(), { total: 3, byModel: { mid: 2, small: 1 }, byTool: { emit: 2, ['__proto__']: 1 }, byModelAndTool: { mid: { emit: 2 }, small: { ['__proto__']: 1 } } });
  assert.equal(Object.getPrototypeOf(counter.snapshot().byTool), Object.prototype, 'a tool named __proto__ is only a key');
});
