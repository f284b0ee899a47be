/**
 * Which turn each content block may stand in (block-roles.ts, issue 31), through the endpoint
 * rules both routes and the calling client run: a block in the other turn is a 400 naming it by
 * its path, and the conversations the service returns (a paused turn among them) still pass.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCountTokensRequest } from '../src/parse-request.js';
import { contentBlockParam } from '../src/content-block-schema.js';
import { assistant, refusal, user } from './rules-verdict.js';

const tools = [
  { name: 'lookup', description: 'Look it up.', input_schema: { type: 'object' } },
  { type: 'web_search_20260209', name: 'web_search' },
  { type: 'web_fetch_20260209', name: 'web_fetch' },
  { type: 'code_execution_20260521', name: 'code_execution' },
];

/** One block of each type the request schema takes in a turn, with contents as the service writes them. */
const BLOCKS: Record<string, Record<string, unknown>> = {
  text: { type: 'text', text: 'Hello.' },
  image: { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
  document: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A note.' } },
  tool_use: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } },
  tool_result: { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Found.' },
  thinking: { type: 'thinking', thinking: 'Let me see.', signature: 'c2lnbmF0dXJl' },
  redacted_thinking: { type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' },
  server_tool_use: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'cats' } },
  web_search_tool_result: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
  web_fetch_tool_result: {
    type: 'web_fetch_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: { type: 'web_fetch_tool_result_error', error_code: 'url_not_accessible' },
  },
  code_execution_tool_result: {
    type: 'code_execution_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: { type: 'code_execution_result', stdout: '4\n', stderr: '', return_code: 0, content: [] },
  },
  tool_search_tool_result: {
    type: 'tool_search_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: { type: 'tool_search_tool_search_result', tool_references: [] },
  },
  compaction: { type: 'compaction', content: null },
};
const USER_ONLY = ['image', 'document', 'tool_result'];
const ASSISTANT_ONLY = [
  'tool_use',
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'tool_search_tool_result',
  'compaction',
];
const SERVER_CALLS = [
  { name: 'web_search', input: { query: 'cats' } },
  { name: 'web_fetch', input: { url: 'https://example.com/' } },
  { name: 'code_execution', input: { code: 'print(2 + 2)' } },
];

describe('a block in the turn it cannot stand in is refused by its path', () => {
  test('the samples cover every block type the request schema takes in a turn', () => {
    const schemaTypes = contentBlockParam.options.map((option) => option.shape.type.value);
    assert.deepEqual(Object.keys(BLOCKS).sort(), [...schemaTypes].sort());
    assert.deepEqual([...USER_ONLY, ...ASSISTANT_ONLY, 'text'].sort(), [...schemaTypes].sort());
  });

  for (const call of SERVER_CALLS)
    test(`a server_tool_use of ${call.name} in a user turn is refused, as the first or a later block`, () => {
      const block = { type: 'server_tool_use', id: 'srvtoolu_1', ...call };
      assert.equal(
        refusal([user([block])]),
        'messages.0.content.0: a server_tool_use block can only appear in an assistant turn',
      );
      assert.equal(
        refusal([user('q'), assistant('a'), user([BLOCKS.text, block])], { tools }),
        'messages.2.content.1: a server_tool_use block can only appear in an assistant turn',
      );
    });

  for (const type of ASSISTANT_ONLY)
    test(`${type} in a user turn is refused, the first message or the last`, () => {
      assert.equal(
        refusal([user([BLOCKS[type]])]),
        `messages.0.content.0: a ${type} block can only appear in an assistant turn`,
      );
      assert.equal(
        refusal([user('q'), assistant('a'), user([BLOCKS.text, BLOCKS[type]])]),
        `messages.2.content.1: a ${type} block can only appear in an assistant turn`,
      );
    });

  for (const type of USER_ONLY)
    test(`${type} in an assistant turn is refused, the middle message or the last`, () => {
      const expected = `${type === 'image' ? 'an' : 'a'} ${type} block can only appear in a user turn`;
      assert.equal(refusal([user('q'), assistant([BLOCKS[type]]), user('go on')]), `messages.1.content.0: ${expected}`);
      assert.equal(refusal([user('q'), assistant([BLOCKS.text, BLOCKS[type]])]), `messages.1.content.1: ${expected}`);
    });

  test('a server block in a system message is refused by the schema: a system message holds text only', () => {
    for (const type of ['server_tool_use', 'web_search_tool_result', 'tool_use'])
      assert.throws(
        () =>
          parseCountTokensRequest({ model: 'mid', messages: [user('q'), { role: 'system', content: [BLOCKS[type]] }] }),
        { message: `messages.1.content.0.type: must be "text"; "${type}" is not` },
      );
  });
});

describe('server tool results answer a call before them in the same turn', () => {
  for (const type of ['web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result'])
    test(`a ${type} block without its server_tool_use is refused naming its id`, () => {
      assert.equal(
        refusal([user('q'), assistant([BLOCKS.text, BLOCKS[type]]), user('go on')]),
        `messages.1.content.1: unexpected tool_use_id found in ${type} blocks: srvtoolu_1. Each ${type} block must answer a server_tool_use block before it in the same message, once.`,
      );
    });

  test('a result before its call, and a second result for one call, are refused', () => {
    const call = BLOCKS.server_tool_use;
    const result = BLOCKS.web_search_tool_result;
    assert.match(
      refusal([user('q'), assistant([result, call])]) ?? '',
      /^messages\.1\.content\.0: unexpected tool_use_id/,
    );
    assert.match(
      refusal([user('q'), assistant([call, result, result])]) ?? '',
      /^messages\.1\.content\.2: unexpected tool_use_id/,
    );
  });

  test('a result answering a client tool_use id is refused: only a server call has a server result', () => {
    const message = refusal([
      user('q'),
      assistant([BLOCKS.tool_use, { ...BLOCKS.web_search_tool_result, tool_use_id: 'toolu_1' }]),
    ]);
    assert.match(
      message ?? '',
      /^messages\.1\.content\.1: unexpected tool_use_id found in web_search_tool_result blocks: toolu_1/,
    );
  });
});

describe('conversations as the service returns them are accepted', () => {
  test('every assistant-turn block in an assistant turn, and every user-turn block in a user turn', () => {
    const turn = ASSISTANT_ONLY.filter((type) => !type.endsWith('_tool_result') && type !== 'server_tool_use').map(
      (type) => BLOCKS[type],
    );
    const userTurn = USER_ONLY.filter((type) => type !== 'tool_result').map((type) => BLOCKS[type]);
    const messages = [
      user([...userTurn, BLOCKS.text]),
      assistant([BLOCKS.text, ...turn]),
      user([BLOCKS.tool_result, BLOCKS.text]),
    ];
    assert.equal(refusal(messages, { tools }), undefined);
  });

  test('a paused turn, an assistant turn ending on a server result, with tools offered', () => {
    for (const [index, call] of SERVER_CALLS.entries()) {
      const result = BLOCKS[['web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result'][index]!];
      const paused = assistant([BLOCKS.text, { type: 'server_tool_use', id: 'srvtoolu_1', ...call }, result]);
      assert.equal(refusal([user('q'), paused], { tools }), undefined, call.name);
    }
  });

  test('an earlier turn with server calls and their results, then a user turn', () => {
    const turn = assistant([
      BLOCKS.server_tool_use,
      BLOCKS.web_search_tool_result,
      { ...BLOCKS.server_tool_use, id: 'srvtoolu_2', name: 'code_execution', input: { code: '1' } },
      { ...BLOCKS.code_execution_tool_result, tool_use_id: 'srvtoolu_2' },
      BLOCKS.text,
    ]);
    assert.equal(
      refusal([user('q'), turn, user('thanks'), { role: 'system', content: 'Be brief.' }], { tools }),
      undefined,
    );
  });
});
