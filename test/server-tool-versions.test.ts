/**
 * The server tools under every dated name a current official client sends (issue 34; the SDK
 * 1.x types list them): web_search_20250305, which Claude Code's WebSearch sends, with its
 * allowed_domains, blocked_domains, user_location and max_uses; the web fetch versions; the Python
 * code execution versions. A version that needs what this service does not have (a shell) is a
 * 400 that names the type and the versions served, in this service's words: no refusal of a
 * type says "Invalid discriminator value".
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  documentsFolder,
  postJson,
  scriptedModels,
  startService,
  type RunningService,
  type WebSearchResult,
} from '@model-messages/testing';
import type { CodeRunner } from '@model-messages/server';

interface Block {
  type: string;
  content?: unknown;
}

interface Reply {
  content: Block[];
  stop_reason: string;
  usage: { server_tool_use: { web_search_requests: number } | null };
}

const URL_BASE = 'https://docs.example.org/';

let service: RunningService;
/** What the stand-in code runner was given to run. */
const ran: string[] = [];

before(async () => {
  const script = join(mkdtempSync(join(tmpdir(), 'mms-tool-versions-')), 'script.json');
  const search = (query: string) => ({ type: 'server_tool_use', name: 'web_search', input: { query } });
  writeFileSync(
    script,
    JSON.stringify([
      { when: '^search otters$', steps: [[search('sea otters')], [{ type: 'text', text: 'Found.' }]] },
      { when: '^search twice$', steps: [[search('otters'), search('rivers')], [{ type: 'text', text: 'Found.' }]] },
      {
        when: '^run code$',
        steps: [
          [{ type: 'server_tool_use', name: 'code_execution', input: { code: 'print(6 * 7)' } }],
          [{ type: 'text', text: 'It printed 42.' }],
        ],
      },
    ]),
  );
  const codeRunner: CodeRunner = {
    run: async (code) => {
      ran.push(code);
      return {
        kind: 'exited',
        returnCode: 0,
        stdout: '42\n',
        stderr: '',
        timings: { waitMs: 0, warm: true, runMs: 1 },
      };
    },
    close: async () => {},
  };
  service = await startService(
    {
      models: scriptedModels({ script }),
      serverTools: {
        webSearch: { provider: { type: 'folder', folder: documentsFolder(), urlBase: URL_BASE, watch: false } },
      },
    },
    process.cwd(),
    { toolProviders: { codeRunner } },
  );
});
after(() => service.close());

async function ask(text: string, tools: unknown[]): Promise<Reply> {
  const response = await postJson(service, '/v1/messages', {
    model: 'large',
    max_tokens: 300,
    messages: [{ role: 'user', content: text }],
    tools,
  });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as Reply;
}

async function refusal(tools: unknown[], messages: unknown[] = [{ role: 'user', content: 'hi' }]): Promise<string> {
  const response = await postJson(service, '/v1/messages', { model: 'large', max_tokens: 50, messages, tools });
  const body = (await response.json()) as { error: { type: string; message: string } };
  assert.equal(response.status, 400, JSON.stringify(body));
  assert.equal(body.error.type, 'invalid_request_error');
  assert.doesNotMatch(body.error.message, /discriminator|Invalid input/);
  return body.error.message;
}

function urls(reply: Reply): string[][] {
  return reply.content
    .filter((block) => block.type === 'web_search_tool_result')
    .map((block) => (Array.isArray(block.content) ? (block.content as WebSearchResult[]).map((hit) => hit.url) : []));
}

describe('web search, every version served', () => {
  for (const type of ['web_search_20250305', 'web_search_20260209', 'web_search_20260318'])
    test(`${type} searches the configured provider, as Claude Code's WebSearch asks it`, async () => {
      // Claude Code's own tool: no allowed_callers, max_uses 8.
      const reply = await ask('search otters', [{ type, name: 'web_search', max_uses: 8 }]);
      assert.deepEqual(
        reply.content.map((block) => block.type),
        ['server_tool_use', 'web_search_tool_result', 'text'],
      );
      assert.equal(urls(reply)[0]![0], `${URL_BASE}otters.md`);
      assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 0 });
    });

  test('allowed_domains keeps only their results; blocked_domains drops theirs', async () => {
    const allowed = await ask('search otters', [
      { type: 'web_search_20250305', name: 'web_search', allowed_domains: ['rivers.example.org'] },
    ]);
    assert.deepEqual(urls(allowed), [['https://rivers.example.org/world']]);
    const blocked = await ask('search otters', [
      { type: 'web_search_20250305', name: 'web_search', blocked_domains: ['docs.example.org'] },
    ]);
    assert.deepEqual(urls(blocked), [['https://rivers.example.org/world']]);
  });

  test('max_uses ends the second search with max_uses_exceeded', async () => {
    const reply = await ask('search twice', [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }]);
    const results = reply.content.filter((block) => block.type === 'web_search_tool_result');
    assert.ok(Array.isArray(results[0]!.content));
    assert.deepEqual(results[1]!.content, { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' });
  });

  test('user_location is taken as the public API has it; a bad one is a 400 naming its field', async () => {
    const location = { type: 'approximate', city: 'Oslo', region: 'Oslo', country: 'NO', timezone: 'Europe/Oslo' };
    const reply = await ask('search otters', [
      { type: 'web_search_20250305', name: 'web_search', user_location: location },
    ]);
    assert.equal(urls(reply)[0]![0], `${URL_BASE}otters.md`);
    const tool = (user_location: unknown) => [{ type: 'web_search_20250305', name: 'web_search', user_location }];
    assert.match(
      await refusal(tool({ ...location, country: 'Norway' })),
      /^tools\.0\.user_location\.country: must be a two-letter ISO 3166-1 country code/,
    );
    assert.match(
      await refusal(tool({ ...location, timezone: 'Mars/Olympus' })),
      /^tools\.0\.user_location\.timezone: must be an IANA time zone/,
    );
    assert.equal(
      await refusal(tool({ ...location, type: 'exact' })),
      'tools.0.user_location.type: must be "approximate"; "exact" is not',
    );
    assert.match(
      await refusal(tool({ ...location, street: 'Main' })),
      /^tools\.0\.user_location\.street: Extra inputs/,
    );
  });
});

describe('web fetch and code execution versions', () => {
  test('every web fetch version is accepted; use_cache only from 20260309, as the types have it', async () => {
    for (const type of ['web_fetch_20250910', 'web_fetch_20260209', 'web_fetch_20260309', 'web_fetch_20260318'])
      await ask('hello', [
        { type, name: 'web_fetch', max_uses: 2, max_content_tokens: 500, allowed_callers: ['direct'] },
      ]);
    await ask('hello', [{ type: 'web_fetch_20260309', name: 'web_fetch', use_cache: false }]);
    assert.equal(
      await refusal([{ type: 'web_fetch_20250910', name: 'web_fetch', use_cache: false }]),
      'tools.0.use_cache: web_fetch_20250910 has no use_cache; it came with web_fetch_20260309 and web_fetch_20260318',
    );
  });

  for (const type of ['code_execution_20250522', 'code_execution_20260521'])
    test(`${type} runs Python and answers a code_execution_tool_result`, async () => {
      const reply = await ask('run code', [{ type, name: 'code_execution' }]);
      assert.deepEqual(
        reply.content.map((block) => block.type),
        ['server_tool_use', 'code_execution_tool_result', 'text'],
      );
      assert.deepEqual(reply.content[1]!.content, {
        type: 'code_execution_result',
        stdout: '42\n',
        stderr: '',
        return_code: 0,
        content: [],
      });
      assert.equal(ran.at(-1), 'print(6 * 7)');
    });

  test('response_inclusion "full" is refused where code may call the tool; "excluded" is what this service does', async () => {
    const code = { type: 'code_execution_20260521', name: 'code_execution' };
    assert.equal(
      await refusal([code, { type: 'web_search_20260318', name: 'web_search' }]),
      'tools.1.response_inclusion: "full" (the default) is not served: the results of calls that code makes go to the code alone here; set response_inclusion to "excluded", or allowed_callers to ["direct"]',
    );
    await ask('hello', [code, { type: 'web_search_20260318', name: 'web_search', response_inclusion: 'excluded' }]);
    await ask('hello', [code, { type: 'web_fetch_20260318', name: 'web_fetch', allowed_callers: ['direct'] }]);
    assert.match(
      await refusal([{ type: 'web_search_20250305', name: 'web_search', response_inclusion: 'excluded' }]),
      /^tools\.0\.response_inclusion: web_search_20250305 has no response_inclusion; it came with web_search_20260318 and web_fetch_20260318$/,
    );
  });
});

describe('types this service does not run are refused in its words', () => {
  test('a code execution version that needs a shell names the versions served', async () => {
    for (const type of ['code_execution_20250825', 'code_execution_20260120'])
      assert.equal(
        await refusal([{ type, name: 'code_execution' }]),
        `tools.0.type: "${type}" is not served here: it runs bash commands and edits files (its results are bash_code_execution and text_editor_code_execution blocks), and this service's sandbox runs Python only; the versions of code_execution served are code_execution_20250522, code_execution_20260521`,
      );
  });

  test('a client-run tool, a toolset and an unknown type each say why, and what is served', async () => {
    assert.match(
      await refusal([{ type: 'bash_20250124', name: 'bash' }]),
      /^tools\.0\.type: "bash_20250124" is not served here: it is a tool the client runs, whose definition this service does not have; give it as a custom tool with its input_schema; the tool types served are custom \(or no type\), web_search_20250305, /,
    );
    assert.match(
      await refusal([{ type: 'mcp_toolset', mcp_server_name: 'x' }]),
      /^tools\.0\.type: "mcp_toolset" is not served here: this service connects to no MCP servers/,
    );
    assert.match(
      await refusal([{ name: 'ok', description: 'd', input_schema: { type: 'object' } }, { type: 'colour_20990101' }]),
      /^tools\.1\.type: "colour_20990101" is not a tool type this service knows; the tool types served are custom \(or no type\), .*tool_search_tool_bm25$/,
    );
  });

  test('an unknown block type, or a type that is not a string, is named with the types taken', async () => {
    const message = await refusal(
      [],
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'bash_code_execution_tool_result', tool_use_id: 'x', content: {} }] },
        { role: 'user', content: 'go on' },
      ],
    );
    assert.match(
      message,
      /^messages\.1\.content\.0\.type: must be one of "text", "image", .*"compaction"; "bash_code_execution_tool_result" is not one of them$/,
    );
    assert.match(
      await refusal([{ type: 7, name: 'x' }]),
      /^tools\.0\.type: must be one of "custom", .*\(or none\); 7 is not one of them$/,
    );
  });
});
