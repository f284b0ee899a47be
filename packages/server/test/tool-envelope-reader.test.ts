/** The `{"name", "input"}` envelope read as it is generated (tool-envelope-reader.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolEnvelopeReader } from '../src/backends/call/tool-envelope-reader.js';

function read(pieces: readonly string[]): { reader: ToolEnvelopeReader; streamed: string[] } {
  const reader = new ToolEnvelopeReader();
  return { reader, streamed: pieces.map((piece) => reader.push(piece)) };
}

test('the input streams piece by piece once the name is whole; the envelope around it does not', () => {
  const { reader, streamed } = read(['{"name": "get_', 'time", "input"', ': {"zone"', ': "UTC"}', '}']);
  assert.equal(reader.name, 'get_time');
  assert.deepEqual(streamed, ['', '', '{"zone"', ': "UTC"}', '']);
  assert.equal(reader.inputText, '{"zone": "UTC"}');
});

test("brackets and quotes inside the input's strings do not end it", () => {
  const { reader } = read(['{"name":"note","input":{"text":"a } and \\" and ]"', ',"n":[1,{}]}', '}']);
  assert.deepEqual(JSON.parse(reader.inputText), { text: 'a } and " and ]', n: [1, {}] });
});

test('whitespace the grammar allows around the input is the envelope’s, not the input’s', () => {
  const { reader, streamed } = read(['{\n "name" : "a" ,\n "input" :', ' \n', '{}', ' \n}']);
  assert.deepEqual(streamed, ['', '', '{}', '']);
  assert.equal(reader.inputText, '{}');
});

test('an envelope cut by max_tokens keeps the input as far as it came', () => {
  const { reader } = read(['{"name":"get_weather","input":{"city":"Par']);
  assert.equal(reader.name, 'get_weather');
  assert.equal(reader.inputText, '{"city":"Par');
});

test('a name not yet whole, or an envelope in another order, gives no name and streams nothing', () => {
  assert.equal(read(['{"name":"get_wea']).reader.name, undefined);
  const reversed = read(['{"input":{"city":"Paris"},', '"name":"get_weather"}']);
  assert.deepEqual(reversed.streamed, ['', '']);
  assert.equal(reversed.reader.name, undefined);
  assert.equal(reversed.reader.inputText, '');
});

test('a scalar input ends where the envelope goes on', () => {
  assert.equal(read(['{"name":"a","input":12', ' }']).reader.inputText, '12');
  assert.equal(read(['{"name":"a","input":"x}"}']).reader.inputText, '"x}"');
});
