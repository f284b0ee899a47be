/**
 * Content that may not be empty (empty-content.ts, issue 32), as the public API refuses it, through
 * the endpoint rules both routes and the calling client run.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assistant, refusal, user } from './rules-verdict.js';

const text = (words: string) => ({ type: 'text', text: words });

describe('content that may not be empty', () => {
  test('a user text of only whitespace is refused, as a string and as a block', () => {
    assert.equal(
      refusal([user('   \n\t  ')]),
      'messages.0.content: text content blocks must contain non-whitespace text',
    );
    assert.equal(
      refusal([user([text('Look:'), text(' \n ')])]),
      'messages.0.content.1.text: text content blocks must contain non-whitespace text',
    );
  });

  test('an empty text block is refused in either turn, and inside a tool result', () => {
    assert.equal(refusal([user([text('')])]), 'messages.0.content.0.text: text content blocks must be non-empty');
    assert.equal(
      refusal([user('Hi.'), assistant([text('')]), user('Go on.')]),
      'messages.1.content.0.text: text content blocks must be non-empty',
    );
    const result = { type: 'tool_result', tool_use_id: 'toolu_1', content: [text('')] };
    const call = { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} };
    assert.equal(
      refusal([user('Hi.'), assistant([call]), user([result])]),
      'messages.2.content.0.content.0.text: text content blocks must be non-empty',
    );
  });

  test('a message with no content is refused, but for a final assistant one (an empty prefill)', () => {
    assert.equal(
      refusal([user('')]),
      'messages.0: all messages must have non-empty content except for the optional final assistant message',
    );
    assert.equal(
      refusal([user([]), assistant('Hi.')]),
      'messages.0: all messages must have non-empty content except for the optional final assistant message',
    );
    assert.equal(refusal([user('Hi.'), assistant('')]), undefined);
    assert.equal(refusal([user('Hi.'), assistant([])]), undefined);
  });

  test('an empty redacted_thinking is refused', () => {
    assert.equal(
      refusal([user('Hi.'), assistant([{ type: 'redacted_thinking', data: '' }, text('Hello.')]), user('Go on.')]),
      "messages.1.content.0.data: a redacted_thinking block's data must be non-empty",
    );
  });

  test("an assistant turn's text of only whitespace is the model's own and passes, as does text with words", () => {
    assert.equal(refusal([user('Hi.'), assistant([text('\n\n')]), user('Go on.')]), undefined);
    assert.equal(refusal([user(' Hi. '), assistant('Hello.'), user([text('More, please.')])]), undefined);
  });
});
