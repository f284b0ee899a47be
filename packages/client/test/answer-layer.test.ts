import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContentBlock, Message, MessageRequest, StopReason } from '@model-messages/protocol';
import { assertStrictSchema } from '@model-messages/client';
import { wrapAnswerSchema } from '../src/answer/answer-envelope.js';
import { answerRetry, replayWithError, type RetryDecision } from '../src/answer/answer-retry.js';
import { classifyAnswer } from '../src/answer/classify-answer.js';
import { DeclineCounter } from '../src/answer/decline-counter.js';
import { resolveModel } from '../src/client-options.js';
import { checkBeforeSend } from '../src/pre-send-checks.js';

const schema = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 5 }, born: { type: 'string', format: 'date' } },
  required: ['name'],
  additionalProperties: false,
};
const message = (content: ContentBlock[], stopReason: StopReason): Message => ({
  id: 'msg',
  type: 'message',
  role: 'assistant',
  model: 'mid',
  content,
  stop_reason: stopReason,
  stop_sequence: null,
  stop_details: null,
  container: null,
  diagnostics: null,
  usage: {
    input_tokens: 1_000,
    output_tokens: 5,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: null,
    server_tool_use: null,
    service_tier: 'standard',
    inference_geo: null,
    output_tokens_details: null,
    speed: null,
  },
});
const folded = (content: ContentBlock[], stopReason: StopReason, unparsed: [string, string][] = []) => ({
  message: message(content, stopReason),
  unparsedInputs: new Map(unparsed),
});
const call = (input: Record<string, unknown>): ContentBlock => ({
  type: 'tool_use',
  id: 'toolu_1',
  name: 'emit',
  input,
  caller: { type: 'direct' },
});
const text = (value: string): ContentBlock => ({ type: 'text', text: value, citations: null });
const bare = { toolName: 'emit', schema, envelope: false };
const wrapped = { ...bare, envelope: true };

describe('classifying a 2xx response', () => {
  test('a valid tool input is the answer', () => {
    assert.deepEqual(classifyAnswer(folded([call({ name: 'Ada', born: '1815-12-10' })], 'tool_use'), bare), {
      kind: 'answer',
      value: { name: 'Ada', born: '1815-12-10' },
      toolUse: call({ name: 'Ada', born: '1815-12-10' }),
    });
  });

  test('truncation comes before everything: a cut-off response without its tool call is no decline', () => {
    assert.equal(classifyAnswer(folded([text('I will call')], 'max_tokens'), bare).kind, 'truncated');
    assert.equal(classifyAnswer(folded([call({})], 'max_tokens', [['toolu_1', '{"na']]), bare).kind, 'truncated');
  });

  test('no call of the output tool is a decline carrying the text, even when the text is broken JSON', () => {
    assert.deepEqual(classifyAnswer(folded([text('{"name": "Ad')], 'end_turn'), bare), {
      kind: 'declined',
      text: '{"name": "Ad',
      stopReason: 'end_turn',
    });
    assert.equal(
      classifyAnswer(folded([{ ...call({ name: 'Ada' }), name: 'other' } as ContentBlock], 'tool_use'), bare).kind,
      'declined',
    );
  });

  test('constraints the strict schema could not carry are enforced here: maxLength, format, extra fields', () => {
    const outcome = (input: Record<string, unknown>) => classifyAnswer(folded([call(input)], 'tool_use'), bare);
    assert.deepEqual(outcome({ name: 'Adelaide' }).kind === 'invalid' && outcome({ name: 'Adelaide' }), {
      kind: 'invalid',
      violation: '/name must NOT have more than 5 characters',
      input: { name: 'Adelaide' },
      toolUse: call({ name: 'Adelaide' }),
    });
    assert.match(JSON.stringify(outcome({ name: 'Ada', born: '1815-13-45' })), /must match format \\"date\\"/);
    assert.equal(outcome({ name: 'Ada', extra: 1 }).kind, 'invalid');
  });

  test('tool input that is not JSON is invalid, not declined', () => {
    const outcome = classifyAnswer(folded([call({})], 'tool_use', [['toolu_1', '{"name": Ada}']]), bare);
    assert.equal(outcome.kind, 'invalid');
    assert.match(outcome.kind === 'invalid' ? outcome.violation : '', /not valid JSON/);
  });
});

describe('Insufficient data: its own outcome, never a decline', () => {
  test('in the envelope: the escape is insufficient data; an answer is unwrapped and validated, paths inside the envelope', () => {
    assert.deepEqual(classifyAnswer(folded([call({ answer: 'Insufficient data' })], 'tool_use'), wrapped), {
      kind: 'insufficient_data',
      text: 'Insufficient data',
    });
    assert.deepEqual(classifyAnswer(folded([call({ answer: { name: 'Ada' } })], 'tool_use'), wrapped), {
      kind: 'answer',
      value: { name: 'Ada' },
      toolUse: call({ answer: { name: 'Ada' } }),
    });
    const tooLong = classifyAnswer(folded([call({ answer: { name: 'Adelaide' } })], 'tool_use'), wrapped);
    assert.equal(tooLong.kind === 'invalid' && tooLong.violation, '/answer/name must NOT have more than 5 characters');
    assert.deepEqual(
      tooLong.kind === 'invalid' && tooLong.input,
      { name: 'Adelaide' },
      'the caller gets the answer unwrapped',
    );
    assert.deepEqual(
      tooLong.kind === 'invalid' && tooLong.toolUse.input,
      { answer: { name: 'Adelaide' } },
      'the retry replays the call as made',
    );
    const otherText = classifyAnswer(folded([call({ answer: 'no idea' })], 'tool_use'), wrapped);
    assert.equal(otherText.kind === 'invalid' && otherText.violation, '/answer must be object');
  });

  test('an input outside the envelope is invalid, naming the envelope', () => {
    const outcome = classifyAnswer(folded([call({ name: 'Ada' })], 'tool_use'), wrapped);
    assert.equal(
      outcome.kind === 'invalid' && outcome.violation,
      '/ must have exactly one property, "answer" (got "name")',
    );
    for (const input of [null, 'Ada', [1]]) {
      const notAnObject = classifyAnswer(
        folded([call(input as unknown as Record<string, unknown>)], 'tool_use'),
        wrapped,
      );
      assert.equal(notAnObject.kind === 'invalid' && notAnObject.violation, '/ must be object', JSON.stringify(input));
    }
  });

  test('a text-only reply of exactly Insufficient data is that outcome with the envelope; without it, a decline; longer text is a decline', () => {
    assert.deepEqual(classifyAnswer(folded([text('Insufficient data.')], 'end_turn'), wrapped), {
      kind: 'insufficient_data',
      text: 'Insufficient data.',
    });
    assert.deepEqual(classifyAnswer(folded([text('Insufficient data.')], 'end_turn'), bare), {
      kind: 'declined',
      text: 'Insufficient data.',
      stopReason: 'end_turn',
    });
    for (const shape of [bare, wrapped])
      assert.equal(
        classifyAnswer(folded([text('Insufficient data on the date, but Ada [1].')], 'end_turn'), shape).kind,
        'declined',
      );
  });

  test('the envelope schema: the strict schema or the escape under "answer"; definitions hoisted, references rebased', () => {
    const tree = {
      type: 'object',
      properties: {
        label: { type: 'string', enum: [{ $ref: '#' }] },
        child: { $ref: '#' },
        kind: { $ref: '#/$defs/kind' },
      },
      $defs: { kind: { anyOf: [{ $ref: '#/properties/label' }] } },
    };
    assert.deepEqual(wrapAnswerSchema(tree), {
      type: 'object',
      properties: {
        answer: {
          anyOf: [
            {
              type: 'object',
              properties: {
                label: { type: 'string', enum: [{ $ref: '#' }] },
                child: { $ref: '#/properties/answer/anyOf/0' },
                kind: { $ref: '#/$defs/kind' },
              },
            },
            {
              type: 'string',
              enum: ['Insufficient data'],
              description: 'Only when the data does not support an answer.',
            },
          ],
        },
      },
      required: ['answer'],
      additionalProperties: false,
      $defs: { kind: { anyOf: [{ $ref: '#/properties/answer/anyOf/0/properties/label' }] } },
    });
    assertStrictSchema(wrapAnswerSchema(tree));
  });
});

describe("the answer layer's one retry", () => {
  const model = resolveModel('mid', { id: 'mid', contextWindow: 200_000, maxOutputTokens: 64_000 });
  const request: MessageRequest = {
    model: 'mid',
    max_tokens: 512,
    system: 'Extract.',
    messages: [{ role: 'user', content: 'Ada Lovelace' }],
    tools: [{ name: 'emit', description: 'd', strict: true, input_schema: { type: 'object' } }],
    tool_choice: { type: 'tool', name: 'emit', disable_parallel_tool_use: true },
  };
  const limits = { model, bufferTokens: 5_000, inputTokens: 1_000, unreadableRetrySpent: false };

  const retried = (decision: RetryDecision) => (decision.retry ? decision.request : assert.fail(decision.why));

  test('truncated: max_tokens doubled, nothing else changed; no retry says which cap stopped it', () => {
    assert.deepEqual(retried(answerRetry(request, { kind: 'truncated' }, 'emit', limits)), {
      ...request,
      max_tokens: 1_024,
    });
    assert.deepEqual(answerRetry({ ...request, max_tokens: 64_000 }, { kind: 'truncated' }, 'emit', limits), {
      retry: false,
      why: "max_tokens 64000 is already the model's limit (64000)",
    });
    assert.deepEqual(
      answerRetry({ ...request, max_tokens: 4_000 }, { kind: 'truncated' }, 'emit', {
        ...limits,
        inputTokens: 191_000,
      }),
      {
        retry: false,
        why: 'the context leaves no room to grow: 200000 window - 191000 input tokens - 5000 buffer = 4000',
      },
    );
  });

  test('declined: text replayed as an assistant turn, a user turn asks for the tool, the tool stays forced', () => {
    const plan = retried(
      answerRetry(request, { kind: 'declined', text: 'Her name is Ada.', stopReason: 'end_turn' }, 'emit', limits),
    );
    assert.deepEqual(plan.messages.slice(1), [
      { role: 'assistant', content: 'Her name is Ada.' },
      {
        role: 'user',
        content: 'You answered without calling the tool "emit". Call it now, with your answer as its input.',
      },
    ]);
    assert.deepEqual(plan.tool_choice, request.tool_choice);
    assert.equal(plan.max_tokens, 512);
  });

  test('declined with no text (thinking only): no empty replay and no second user turn in a row; the ask joins the last user turn', () => {
    const plan = retried(answerRetry(request, { kind: 'declined', text: '', stopReason: 'end_turn' }, 'emit', limits));
    assert.deepEqual(plan.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Ada Lovelace' },
          { type: 'text', text: 'Answer by calling the tool "emit" now, with your answer as its input.' },
        ],
      },
    ]);
    const afterGuardrail = replayWithError(
      request,
      call({ name: 'x' }) as Extract<ContentBlock, { type: 'tool_use' }>,
      'rejected',
    );
    const again = retried(
      answerRetry(afterGuardrail, { kind: 'declined', text: '', stopReason: 'end_turn' }, 'emit', limits),
    );
    assert.deepEqual(
      again.messages.map((message) => message.role),
      ['user', 'assistant', 'user'],
    );
    assert.deepEqual(
      (again.messages[2]?.content as Array<{ type: string }>).map((block) => block.type),
      ['tool_result', 'text'],
    );
    checkBeforeSend(again, model, { bufferTokens: 5_000, checkPromptSize: true });
  });

  test('unreadable 2xx: the request sent again as it was, once in the whole call (issue 32)', () => {
    const unreadable = {
      kind: 'unreadable' as const,
      detail: "the 200 response's body is unreadable (text/html): no event stream: <html>",
      failure: { kind: 'http' as const, status: 200, errorType: undefined, message: 'unreadable' },
    };
    assert.deepEqual(answerRetry(request, unreadable, 'emit', limits), {
      retry: true,
      request,
      reason:
        "the 2xx body was unreadable; sending the request again: the 200 response's body is unreadable (text/html): no event stream: <html>",
    });
    assert.deepEqual(answerRetry(request, unreadable, 'emit', { ...limits, unreadableRetrySpent: true }), {
      retry: false,
      why: 'the call already spent its one retry of an unreadable 2xx',
    });
  });

  test('invalid: the call replayed and answered by an error result naming the violation', () => {
    const toolUse = call({ name: 'Adelaide' });
    const plan = retried(
      answerRetry(
        request,
        {
          kind: 'invalid',
          violation: '/name must NOT have more than 5 characters',
          input: { name: 'Adelaide' },
          toolUse: toolUse as Extract<ContentBlock, { type: 'tool_use' }>,
        },
        'emit',
        limits,
      ),
    );
    assert.deepEqual(plan.messages.slice(1), [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'emit', input: { name: 'Adelaide' } }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            is_error: true,
            content:
              'The input failed validation: /name must NOT have more than 5 characters. Call "emit" again with input that satisfies its schema.',
          },
        ],
      },
    ]);
  });
});

test('declines are counted per model and per tool', () => {
  const counter = new DeclineCounter();
  counter.count('mid', 'emit');
  counter.count('mid', 'emit');
  counter.count('small', '__proto__');
  assert.deepEqual(counter.snapshot(), {
    total: 3,
    byModel: { mid: 2, small: 1 },
    byTool: { emit: 2, ['__proto__']: 1 },
    byModelAndTool: { mid: { emit: 2 }, small: { ['__proto__']: 1 } },
  });
  assert.equal(
    Object.getPrototypeOf(counter.snapshot().byTool),
    Object.prototype,
    'a tool named __proto__ is only a key',
  );
});
