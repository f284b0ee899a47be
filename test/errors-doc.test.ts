/** docs/errors.md and the code's error table say the same thing. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_TABLE } from '@model-messages/protocol';

const rows = readFileSync('docs/errors.md', 'utf8')
  .split('\n')
  .filter((line) => /^\| [a-z_]+ \| \d{3} \|/.test(line))
  .map((line) => line.split('|').map((cell) => cell.trim()))
  .map(([, code, status, type]) => ({ code: code!, status: Number(status), type: type! }));

test('docs/errors.md has one row per error code, with its status and type', () => {
  const expected = Object.entries(ERROR_TABLE).map(([code, entry]) => ({
    code,
    status: entry.status,
    type: entry.type,
  }));
  assert.deepEqual(rows, expected);
});
