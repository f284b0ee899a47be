/** The scripted backend's tokenizer: lossless, its count agrees with its tokens, and its fast path with its pattern. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens, tokenize, tokenPrefix } from '../src/backends/scripted/tokenizer.js';

const TEXTS = [
  '',
  'hello',
  'Summarize the benchmark in one short sentence please.',
  '  leading and trailing  ',
  'naïve café, 東京 — ok?!',
  'emoji 🙂🙂 and\ttabs\nlines',
  '{"a": [1, 2.5e3, null]}',
  '   ',
];
/** The tokenizer's definition: a word, or one punctuation mark, with its leading spaces. */
const DEFINITION = /\s*[\p{L}\p{N}_]+|\s*[^\s\p{L}\p{N}_]|\s+$/gu;

/** Characters where the fast path for ASCII meets the pattern's Unicode classes. */
const ALPHABET = [
  'a',
  'Z',
  '0',
  '_',
  ' ',
  '\t',
  '\n',
  '\r',
  '\v',
  '\f',
  '.',
  '-',
  '"',
  '{',
  '~',
  'é',
  'ß',
  '東',
  '٣',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\ufeff',
  '—',
  '🙂',
  '\ud800',
  '\u0301',
  '\u0085',
];

/** A fixed sequence of pseudo-random texts over ALPHABET (a linear congruential generator). */
function* randomTexts(count: number): Generator<string> {
  let seed = 12345;
  const next = (limit: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % limit;
  };
  for (let index = 0; index < count; index += 1) {
    let text = '';
    const length = next(24);
    for (let position = 0; position < length; position += 1) text += ALPHABET[next(ALPHABET.length)];
    yield text;
  }
}

test('the count is the number of tokens, and the tokens join back to the text', () => {
  for (const text of TEXTS) {
    assert.equal(tokenize(text).join(''), text, JSON.stringify(text));
    assert.equal(countTokens(text), tokenize(text).length, JSON.stringify(text));
  }
});

test('the tokens are the matches of the definition, on ASCII, on Unicode and on both mixed', () => {
  for (const text of [...TEXTS, ...randomTexts(5000)]) {
    const expected = text.match(DEFINITION) ?? [];
    assert.deepEqual(tokenize(text), expected, JSON.stringify(text));
    assert.equal(countTokens(text), expected.length, JSON.stringify(text));
  }
});

test('a prefix of n tokens is the first n tokens joined; past the end it is the whole text', () => {
  for (const text of [...TEXTS, ...randomTexts(500)]) {
    const tokens = tokenize(text);
    for (let count = 0; count <= tokens.length + 1; count += 1) {
      assert.equal(tokenPrefix(text, count), tokens.slice(0, count).join(''), `${JSON.stringify(text)}, ${count}`);
    }
  }
});

test('counting twice in a row gives the same count (no state left between calls)', () => {
  const text = 'one two three';
  assert.equal(countTokens(text), 3);
  assert.equal(countTokens(text), 3);
  assert.equal(countTokens('four'), 1);
  assert.equal(countTokens('naïve'), 1);
  assert.equal(countTokens('naïve'), 1);
});
