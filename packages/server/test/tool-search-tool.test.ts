/**
 * Tool search run by the service (issue 34; tools/tool-search/): a regular expression or words
 * over the request's deferred tools, by name, description and parameters, at most 5 tools found,
 * a pattern of at most 200 characters, and a pattern RE2 cannot read answered as the call's
 * error with the reason, never a crash or a slow match.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMessageRequest, type ServerToolResultBlock } from '@model-messages/protocol';
import { ToolSearchTool } from '../src/tools/tool-search/tool-search-tool.js';

const deferred = (name: string, description: string, properties: Record<string, unknown> = {}) => ({
  name,
  description,
  input_schema: { type: 'object', properties },
  defer_loading: true,
});

const TOOLS = [
  { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
  { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
  // Offered from the start: never what a search finds.
  { name: 'weather_now', description: 'The weather, not deferred.', input_schema: { type: 'object' } },
  deferred('send_email', 'Send an email.', { subject: { type: 'string', description: 'Often the weather report.' } }),
  deferred('get_forecast', "A week's weather for a city."),
  deferred('get_weather', 'Conditions in a city now.', { city: { type: 'string' } }),
  deferred('sendSlackMessage', 'Post to a channel.', { channel: { type: 'string' } }),
  deferred('list_files', 'List the files of a folder.', { path: { type: 'string', description: 'The folder.' } }),
];

async function search(name: 'tool_search_tool_regex' | 'tool_search_tool_bm25', query: unknown, tools = TOOLS) {
  const request = parseMessageRequest({
    model: 'm',
    max_tokens: 16,
    tools,
    messages: [{ role: 'user', content: 'q' }],
  });
  const call = { type: 'server_tool_use' as const, id: 'srvtoolu_1', name, input: { query } };
  return new ToolSearchTool().run(call, { request });
}

function found(result: ServerToolResultBlock): string[] {
  const content = result.content as { type: string; tool_references?: Array<{ type: string; tool_name: string }> };
  assert.equal(content.type, 'tool_search_tool_search_result', JSON.stringify(content));
  for (const reference of content.tool_references!) assert.equal(reference.type, 'tool_reference');
  return content.tool_references!.map((reference) => reference.tool_name);
}

function refused(result: ServerToolResultBlock): string {
  const content = result.content as { type: string; error_code: string; error_message: string };
  assert.deepEqual([content.type, content.error_code], ['tool_search_tool_result_error', 'invalid_tool_input']);
  return content.error_message;
}

describe('tool search by a regular expression', () => {
  test('finds deferred tools by name, then description, then parameters, never an offered one', async () => {
    assert.deepEqual(found(await search('tool_search_tool_regex', 'weather')), [
      'get_weather',
      'get_forecast',
      'send_email',
    ]);
  });

  test("reads RE2's syntax for what searches use: classes, alternatives, (?i)", async () => {
    assert.deepEqual(found(await search('tool_search_tool_regex', '(?i)SLACK|^list_')), [
      'sendSlackMessage',
      'list_files',
    ]);
    assert.deepEqual(found(await search('tool_search_tool_regex', 'get_[a-z]+')), ['get_forecast', 'get_weather']);
    assert.deepEqual(found(await search('tool_search_tool_regex', 'nothing matches this')), []);
  });

  test('finds at most 5 tools', async () => {
    const many = Array.from({ length: 8 }, (_, index) => deferred(`tool_${index}`, 'A tool.'));
    const tools = [TOOLS[0]!, ...many];
    assert.deepEqual(found(await search('tool_search_tool_regex', 'tool_', tools)), [
      'tool_0',
      'tool_1',
      'tool_2',
      'tool_3',
      'tool_4',
    ]);
  });

  test('a pattern of 200 characters is searched, one of 201 is the call error', async () => {
    assert.deepEqual(found(await search('tool_search_tool_regex', `weather|${'x'.repeat(192)}`)), [
      'get_weather',
      'get_forecast',
      'send_email',
    ]);
    assert.equal(
      refused(await search('tool_search_tool_regex', 'x'.repeat(201))),
      'the query is longer than 200 characters',
    );
  });

  test('a pattern RE2 cannot read, or whose program would be huge, is the call error with why', async () => {
    assert.match(refused(await search('tool_search_tool_regex', 'weather(?=now)')), /^the pattern cannot be read: /);
    assert.equal(
      refused(await search('tool_search_tool_regex', '(a{1000}){1000}')),
      'the pattern cannot be read: the pattern compiles to too large a program (counted repetitions unroll)',
    );
  });

  test('a missing, empty or non-string query is the call error', async () => {
    for (const query of [undefined, '', '   ', 42])
      assert.equal(refused(await search('tool_search_tool_regex', query)), 'the query is missing or empty');
  });
});

describe('tool search by words (BM25)', () => {
  test('ranks deferred tools by the words, names split where they join words', async () => {
    assert.deepEqual(found(await search('tool_search_tool_bm25', 'send a slack message')).slice(0, 2), [
      'sendSlackMessage',
      'send_email',
    ]);
    assert.equal(found(await search('tool_search_tool_bm25', 'weather in a city'))[0], 'get_weather');
    assert.deepEqual(found(await search('tool_search_tool_bm25', 'folder files')), ['list_files']);
  });

  test('words that match no deferred tool find none', async () => {
    assert.deepEqual(found(await search('tool_search_tool_bm25', 'quantum chromodynamics')), []);
  });
});
