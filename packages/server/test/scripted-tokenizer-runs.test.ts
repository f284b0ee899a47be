/**
 * The scripted tokenizer cuts long runs: a word and a run of spaces hold at most LONGEST_RUN
 * characters each in a token, so that a text's length bounds its count; the fast path for ASCII
 * and the pattern agree on texts with long runs too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens, LONGEST_RUN, tokenize } from '../src/backends/scripted/tokenizer.js';

/** The definition with the cut, written out as one global pattern. */
const DEFINITION = new RegExp(
  `\\s{0,${LONGEST_RUN}}[\\p{L}\\p{N}_]{1,${LONGEST_RUN}}|\\s{0,${LONGEST_RUN}}[^\\s\\p{L}\\p{N}_]|\\s{1,${LONGEST_RUN}}`,
  'gu',
);

const PIECES = ['a', 'é', '東', '𝐀', '_', '7', ' ', '\t', '\u3000', '.', '🙂'];

/** Texts of runs around LONGEST_RUN long, of one piece each, from a fixed pseudo-random sequence. */
function* runTexts(count: number): Generator<string> {
  let seed = 4242;
  const next = (limit: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % limit;
  };
  for (let index = 0; index < count; index += 1) {
    let text = '';
    for (let run = next(4) + 1; run > 0; run -= 1) {
      text += PIECES[next(PIECES.length)]!.repeat(LONGEST_RUN - 3 + next(7) + (next(5) === 0 ? LONGEST_RUN : 0));
    }
    yield text;
  }
}

test('tokens are the matches of the cut definition, and join back to the text', () => {
  for (const text of runTexts(2000)) {
    const expected = text.match(DEFINITION) ?? [];
    assert.deepEqual(tokenize(text), expected, JSON.stringify(text));
    assert.equal(countTokens(text), expected.length);
    assert.equal(tokenize(text).join(''), text);
  }
});

test('a word of a million letters is many tokens, and no token is longer than three runs of units', () => {
  const tokens = tokenize('x'.repeat(1_000_000));
  assert.equal(tokens.length, Math.ceil(1_000_000 / LONGEST_RUN));
  for (const text of runTexts(200)) for (const token of tokenize(text)) assert.ok(token.length <= 3 * LONGEST_RUN);
});

test('ten million letters outside ASCII are counted, not a stack overflow', () => {
  assert.equal(countTokens('東'.repeat(10_000_000)), Math.ceil(10_000_000 / LONGEST_RUN));
});
