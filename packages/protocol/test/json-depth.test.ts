/** assertJsonDepth: containers count, values inside the deepest container do not, and it never recurses. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertJsonDepth } from '../src/parse-request.js';

function nestedArrays(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level += 1) value = [value];
  return value;
}

function nestedObjects(depth: number): unknown {
  let value: unknown = 7;
  for (let level = 0; level < depth; level += 1) value = { inner: value, other: null };
  return value;
}

const tooDeep = /nests deeper than 3 levels/;

test('containers up to the limit pass, and one more is refused, for arrays and objects alike', () => {
  for (const nested of [nestedArrays, nestedObjects]) {
    assert.doesNotThrow(() => assertJsonDepth(nested(3), 3));
    assert.throws(() => assertJsonDepth(nested(4), 3), tooDeep);
  }
});

test('the deepest branch decides, wherever it is among its siblings', () => {
  assert.doesNotThrow(() => assertJsonDepth({ a: [1, 2, { b: 'c' }], d: [[]] }, 3));
  assert.throws(() => assertJsonDepth({ a: 1, b: [2, [3, [4]]], c: 'x' }, 3), tooDeep);
  assert.throws(() => assertJsonDepth([{ a: 1 }, [], { b: { c: {} } }, 5], 3), tooDeep);
});

test('scalars and null are no level: a scalar body passes, and so does a leaf below the last container', () => {
  for (const scalar of [null, 1, 'text', true]) assert.doesNotThrow(() => assertJsonDepth(scalar, 1));
  assert.doesNotThrow(() => assertJsonDepth({ a: null, b: 'x', c: [1, null] }, 2));
});

test('a hundred thousand levels are refused without a stack overflow', () => {
  assert.throws(() => assertJsonDepth(nestedArrays(100_000), 128), /nests deeper than 128 levels/);
});
