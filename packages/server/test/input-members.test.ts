/**
 * A call's input streamed a member at a time (backends/call/input-members.ts, issue 35), over
 * the structural JSON reading it shares with the envelope reader and the leaked-call parsers
 * (backends/call/json-scan.ts): what goes out, whatever pieces the input comes in, and what a
 * repair adds to an input some of whose members went out.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InputMembers } from '../src/backends/call/input-members.js';
import { consecutiveJsonValues, jsonValueEnd } from '../src/backends/call/json-scan.js';

/** The text that goes out for `pieces`, each push's share. */
function pushed(pieces: readonly string[]): { members: InputMembers; out: string[] } {
  const members = new InputMembers();
  return { members, out: pieces.map((piece) => members.push(piece)) };
}

describe('input members', () => {
  test('a member goes out once whole, the closing bracket only with the last', () => {
    const { members, out } = pushed(['{"command": "l', 's", "time', 'out": 30', '}']);
    assert.deepEqual(out, ['', '{"command": "ls"', '', ', "timeout": 30']);
    assert.equal(members.closing(), '}');
    assert.deepEqual(members.object(), { command: 'ls', timeout: 30 });
    assert.deepEqual(members.sent, { command: 'ls', timeout: 30 });
  });

  test('commas and brackets inside strings and nested values do not end a member', () => {
    const text = '{"a": "x, }", "b": {"c": [1, 2]}, "d": "\\"{"}';
    for (let cut = 0; cut <= text.length; cut += 1) {
      const { members, out } = pushed([text.slice(0, cut), text.slice(cut)]);
      assert.equal(out.join('') + members.closing(), text, `cut at ${cut}`);
      assert.deepEqual(members.object(), { a: 'x, }', b: { c: [1, 2] }, d: '"{' });
    }
  });

  test('no text at all is the input {}', () => {
    const { members } = pushed(['']);
    assert.deepEqual(members.object(), {});
    assert.equal(members.completion({}), '{}');
  });

  test('input that is not an object sends nothing and is broken', () => {
    const { members, out } = pushed(['"ls"']);
    assert.deepEqual(out, ['']);
    assert.equal(members.broken, true);
    assert.equal(members.object(), undefined);
  });

  test('a member that does not parse stops the stream there', () => {
    const { members, out } = pushed(['{"a": 1, "command": ls -la}']);
    assert.deepEqual(out, ['{"a": 1']);
    assert.equal(members.broken, true);
    assert.deepEqual(members.sent, { a: 1 });
  });

  test('a repair adds the members not sent, after those that were', () => {
    const { members } = pushed(['{"limit": 50, "file_pa']);
    assert.equal(members.object(), undefined, 'cut short: not whole');
    const repaired = { file_path: '/a', limit: 7 };
    assert.equal(members.completion(repaired), ', "file_path": "/a"}');
    // The client keeps the member it had: the repair only adds.
    assert.deepEqual(members.completed(repaired), { limit: 50, file_path: '/a' });
  });

  test('what the engine ran on with after the object is kept apart', () => {
    const { members } = pushed(['{"city": "Paris"}{"city": ', '"Oslo"}']);
    assert.deepEqual(members.object(), { city: 'Paris' });
    assert.equal(members.after(), '{"city": "Oslo"}');
  });
});

describe('json scan', () => {
  test('where a value ends; undefined while it runs past the text', () => {
    assert.equal(jsonValueEnd('  {"a": "}"} tail'), 12);
    assert.equal(jsonValueEnd('[1, [2]], 3'), 8);
    assert.equal(jsonValueEnd('12, 3'), 2);
    assert.equal(jsonValueEnd('{"a": "}'), undefined);
    assert.equal(jsonValueEnd('   '), undefined);
  });

  test('values one after another, or undefined when anything else stands between', () => {
    assert.deepEqual(consecutiveJsonValues('{"a": 1} {"b": 2}\n'), [{ a: 1 }, { b: 2 }]);
    assert.equal(consecutiveJsonValues('{"a": 1}, {"b": 2}'), undefined);
    assert.equal(consecutiveJsonValues('{"a": 1} junk'), undefined);
  });
});
