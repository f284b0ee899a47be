/**
 * The JSON bounds' two readers: the walk over a parsed value and the scan over its text refuse
 * the same bodies with the same message, and name the container that holds the most values.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertJsonBounds, assertJsonTextBounds, type JsonBounds } from '../src/json-bounds.js';

/** A small deterministic generator, so that a failure can be run again. */
function randomSource(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** Strings with the characters a scanner could trip on: quotes, backslashes, brackets, commas, colons. */
const AWKWARD_STRINGS = ['', 'a', '"', '\\', '\\"', '[{', '}],:', 'é', '\u2028', 'x\\\\"y'];

function randomJson(random: () => number, depth: number): unknown {
  const pick = random();
  if (depth > 6 || pick < 0.35) {
    const scalars = [null, true, false, 0, -1.5e10, AWKWARD_STRINGS[Math.floor(random() * AWKWARD_STRINGS.length)]];
    return scalars[Math.floor(random() * scalars.length)];
  }
  const size = Math.floor(random() * 6);
  if (pick < 0.7) return Array.from({ length: size }, () => randomJson(random, depth + 1));
  // Keys that are not integers: JavaScript lists integer keys first, not in the order written.
  return Object.fromEntries(
    Array.from({ length: size }, (_, index) => [
      `k${index}${AWKWARD_STRINGS[index % AWKWARD_STRINGS.length]}`,
      randomJson(random, depth + 1),
    ]),
  );
}

function outcome(check: () => void): string {
  try {
    check();
    return 'accepted';
  } catch (error) {
    return (error as Error).message;
  }
}

test('the walk and the scan agree on 3,000 generated values, pretty-printed or not', () => {
  const random = randomSource(16);
  let refused = 0;
  for (let round = 0; round < 3_000; round += 1) {
    const value = randomJson(random, 0);
    const bounds: JsonBounds = { maxDepth: 1 + Math.floor(random() * 6), maxValues: 1 + Math.floor(random() * 40) };
    const walked = outcome(() => assertJsonBounds(value, bounds));
    for (const text of [JSON.stringify(value), JSON.stringify(value, null, 2)]) {
      assert.equal(
        outcome(() => assertJsonTextBounds(Buffer.from(text), bounds)),
        walked,
        `${text} ${JSON.stringify(bounds)}`,
      );
    }
    if (walked !== 'accepted') refused += 1;
  }
  // Both sides of the bounds were exercised.
  assert.ok(refused > 500 && refused < 2_500, `${refused} of 3,000 refused`);
});

test('the message names the container with the most values read, with its path', () => {
  const bounds = { maxDepth: 10, maxValues: 20 };
  const value = { model: 'm', messages: [{ role: 'user', content: Array(30).fill(1) }] };
  const expected = { message: /^messages\.0\.content: too many values; a request body holds at most 20 JSON values/ };
  assert.throws(() => assertJsonBounds(value, bounds), expected);
  assert.throws(() => assertJsonTextBounds(Buffer.from(JSON.stringify(value)), bounds), expected);
  const wide = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`field${index}`, index]));
  assert.throws(() => assertJsonBounds(wide, bounds), { message: /^body: too many values/ });
});

test('a key with escapes is named as it reads once decoded', () => {
  const value = { 'say "hi"\\': Array(30).fill(0) };
  assert.throws(() => assertJsonTextBounds(Buffer.from(JSON.stringify(value)), { maxDepth: 5, maxValues: 10 }), {
    message: /^say "hi"\\: too many values/,
  });
});

test('text that is not JSON is left to the parser, not refused or looped on', () => {
  for (const text of ['', '"unterminated', '[1,2', ']]]]', '{"a" "b"}', '\\"', '{,,:}']) {
    assert.doesNotThrow(() => assertJsonTextBounds(Buffer.from(text), { maxDepth: 4, maxValues: 100 }));
  }
});
