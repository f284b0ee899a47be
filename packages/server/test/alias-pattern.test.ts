/** Alias patterns: `*` is any run of characters, everything else literal, the whole name matched, in one pass. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AliasPattern, isAliasPattern } from '../src/support/alias-pattern.js';

const matches = (pattern: string, name: string) => new AliasPattern(pattern).matches(name);

test('a pattern matches the whole name, * standing for any run of characters', () => {
  assert.ok(matches('claude-*', 'claude-opus-5-5'));
  assert.ok(matches('*haiku*', 'claude-haiku-4-5-20251001'));
  assert.ok(matches('claude-*-4-5*', 'claude-sonnet-4-5-20250929'));
  // Anchored at both ends: a match inside the name is not a match.
  assert.ok(!matches('claude-*', 'my-claude-opus'));
  assert.ok(!matches('*-opus', 'claude-opus-5'));
  assert.ok(!matches('claude-*-haiku', 'claude-opus'));
});

test('* matches the empty run, at either end and between pieces', () => {
  assert.ok(matches('claude-*', 'claude-'));
  assert.ok(matches('*claude', 'claude'));
  assert.ok(matches('a*b*c', 'abc'));
  assert.ok(matches('*', ''));
  assert.ok(matches('**', 'anything at all'));
});

test('the pieces around the stars may not overlap', () => {
  // "aba" starts and ends the name only by sharing its middle "a".
  assert.ok(!matches('ab*ba', 'aba'));
  assert.ok(matches('ab*ba', 'abba'));
  assert.ok(!matches('a*bc*c', 'abc'));
  assert.ok(matches('a*bc*c', 'abcc'));
});

test('every character but * is literal: regex syntax in a pattern means itself', () => {
  assert.ok(matches('claude-3.5-*', 'claude-3.5-sonnet'));
  assert.ok(!matches('claude-3.5-*', 'claude-345-sonnet'));
  assert.ok(matches('(a+)+$*', '(a+)+$x'));
  assert.ok(!matches('(a+)+$*', 'aaaa'));
  assert.ok(matches('[opus]?*', '[opus]?-5'));
  assert.ok(!matches('[opus]?*', 'o-5'));
  assert.ok(matches('^*\\d', '^x\\d'));
  assert.ok(!matches('^*\\d', 'x1'));
});

test('a long adversarial name against many stars is decided in one pass', () => {
  // A backtracking matcher tries every split of the a's among the stars before failing on the b.
  const name = 'a'.repeat(1_000_000);
  const pattern = new AliasPattern(`${'*a'.repeat(30)}*b*`);
  assert.ok(!pattern.matches(name));
  assert.ok(pattern.matches(`${name}b`));
  assert.ok(!new AliasPattern(`${'*a'.repeat(30)}*b`).matches(name));
  assert.ok(!new AliasPattern('*aaaaaaaaaaaaaaaaaaaaaaaaaaaaab*').matches(name));
});

test('an alias is a pattern when it has a *; runs of stars are one star', () => {
  assert.ok(isAliasPattern('claude-*'));
  assert.ok(isAliasPattern('*'));
  assert.ok(!isAliasPattern('claude-opus'));
  assert.equal(new AliasPattern('claude-**-*').canonical, 'claude-*-*');
  assert.throws(() => new AliasPattern('claude'), /exact alias/);
});
