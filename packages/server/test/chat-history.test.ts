/** Model call -> node-llama-cpp chat history, the input of the model's own chat template. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toChatHistory } from '../src/backends/llama-cpp/chat-history.js';
import { promptOf as request } from './model-call-support.js';

test('system, user and an empty model turn to generate', () => {
  const { history, continuation } = toChatHistory(
    request({ system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: 'Hi' }] }),
    'Extra rule.',
  );
  assert.deepEqual(history, [
    { type: 'system', text: 'Be brief.\n\nExtra rule.' },
    { type: 'user', text: 'Hi' },
    { type: 'model', response: [] },
  ]);
  assert.equal(continuation, history.at(-1));
});

test('thinking, tool calls and their results land in the model turn, which goes on after the results', () => {
  // node-llama-cpp's function calling continues the same model response after a call's result.
  const { history, continuation } = toChatHistory(
    request({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Need a lookup.', signature: 's' },
            { type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Oslo' } },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: '3 C' }] }],
        },
      ],
    }),
  );
  assert.deepEqual(history, [
    { type: 'user', text: 'Weather?' },
    {
      type: 'model',
      response: [
        { type: 'segment', segmentType: 'thought', text: 'Need a lookup.', ended: true },
        { type: 'functionCall', name: 'weather', params: { city: 'Oslo' }, result: '3 C' },
      ],
    },
  ]);
  assert.equal(continuation, history[1]);
});

test('an error tool_result says so to the model', () => {
  const { history } = toChatHistory(
    request({
      messages: [
        { role: 'user', content: 'Go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'timeout', is_error: true },
            { type: 'text', text: 'Try again' },
          ],
        },
      ],
    }),
  );
  const model = history[1];
  assert.equal(
    model?.type === 'model' && model.response[0] !== undefined && typeof model.response[0] === 'object'
      ? (model.response[0] as { result: unknown }).result
      : undefined,
    'Error: timeout',
  );
  assert.deepEqual(history[2], { type: 'user', text: 'Try again' });
});

test('a final assistant turn is continued, not answered anew', () => {
  const { history, continuation } = toChatHistory(
    request({
      messages: [
        { role: 'user', content: 'Count' },
        { role: 'assistant', content: 'One, two,' },
      ],
    }),
  );
  assert.equal(history.length, 2);
  assert.deepEqual(continuation, { type: 'model', response: ['One, two,'] });
});

test('consecutive user turns merge into one', () => {
  const { history } = toChatHistory(
    request({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ],
    }),
  );
  assert.deepEqual(history[0], { type: 'user', text: 'a\n\nb' });
});
