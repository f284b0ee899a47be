/** The scripted backend's tokenizer: lossless, and its count agrees with its tokens. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens, tokenize } from '../src/backends/scripted/tokenizer.js';

const TEXTS = ['', 'hello', 'Summarize the benchmark in one short sentence please.', '  leading and trailing  ', 'naïve café, 東京 — ok?!', 'emoji 🙂🙂 and\ttabs\nlines', '{"a": [1, 2.5e3, null]}', '   '];

test('the count is the number of tokens, and the tokens join back to the text', () => {
  for (const text of TEXTS) {
    assert.equal(tokenize(text).join(''), text, JSON.stringify(text));
    assert.equal(countTokens(text), tokenize(text).length, JSON.stringify(text));
  }
});

test('counting twice in a row gives the same count (no state left between calls)', () => {
  const text = 'one two three';
  assert.equal(countTokens(text), 3);
  assert.equal(countTokens(text), 3);
  assert.equal(countTokens('four'), 1);
});
