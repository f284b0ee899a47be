/**
 * docs/contract.md's table of the endpoint's five rules, held against the service (issue 32):
 * every statement of a row (its parts between semicolons) has a request here that breaks it, and
 * the service refuses each with the row's code and the rule's name. A statement added to the
 * table fails this test until it has its case.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, scriptedModels, startService, type RunningService } from '@model-messages/testing';

interface Row {
  rule: number;
  statements: string[];
  code: string;
}

const rows: Row[] = readFileSync('docs/contract.md', 'utf8')
  .split('\n')
  .filter((line) => /^\| [1-5] \|/.test(line))
  .map((line) => line.split('|').map((cell) => cell.trim()))
  .map(([, rule, refused, code]) => ({
    rule: Number(rule),
    // Parts between semicolons, outside parentheses (a link list may hold none, but keep to the text).
    statements: refused!.split(/; (?![^(]*\))/),
    code: code!.replaceAll('`', ''),
  }));

/** A request that breaks a statement, and where it matters, one like it that keeps it. */
interface Case {
  /** Words the statement must hold, so that the case and the table's text stay one. */
  says: string;
  breaks: () => Promise<Record<string, unknown>> | Record<string, unknown>;
  keeps?: () => Promise<Record<string, unknown>> | Record<string, unknown>;
}

const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: unknown) => ({ role: 'assistant', content });
const ask = user('look up otters');
const base = { model: 'mid', max_tokens: 200, messages: [user('Hello.')] };
const strictTool = (
  schema: Record<string, unknown> = { type: 'object', properties: { city: { type: 'string' } } },
) => ({
  name: 'record',
  description: 'Record it.',
  strict: true,
  input_schema: schema,
});
const SEARCH = { type: 'web_search_20260209', name: 'web_search', max_uses: 5 };
const DIRECT_SEARCH = { ...SEARCH, allowed_callers: ['direct'] };

let service: RunningService;
let paused: RunningService;

/** A turn this service paused after `ask`: a search call and its result. */
async function pausedTurn(): Promise<Array<Record<string, unknown>>> {
  const response = await postJson(paused, '/v1/messages', { ...base, messages: [ask], tools: [DIRECT_SEARCH] });
  const reply = (await response.json()) as { stop_reason: string; content: Array<Record<string, unknown>> };
  assert.equal(reply.stop_reason, 'pause_turn');
  return reply.content;
}

const CASES: Record<number, Case[]> = {
  1: [
    {
      says: 'a keyword outside the list',
      breaks: () => ({
        ...base,
        tools: [strictTool({ type: 'object', properties: { city: { type: 'string', maxLength: 5 } } })],
      }),
      keeps: () => ({ ...base, tools: [strictTool()] }),
    },
  ],
  2: [
    {
      says: '`tool_choice` forces a strict tool',
      breaks: () => ({
        ...base,
        thinking: { type: 'adaptive' },
        tools: [strictTool()],
        tool_choice: { type: 'tool', name: 'record' },
      }),
      keeps: () => ({
        ...base,
        model: 'small-newer',
        thinking: { type: 'disabled' },
        tools: [strictTool()],
        tool_choice: { type: 'tool', name: 'record' },
      }),
    },
  ],
  3: [
    {
      says: 'beside a strict tool',
      breaks: () => ({ ...base, tools: [SEARCH, strictTool()] }),
      keeps: () => ({ ...base, tools: [DIRECT_SEARCH, strictTool()] }),
    },
    {
      says: 'beside `disable_parallel_tool_use`',
      breaks: () => ({ ...base, tools: [SEARCH], tool_choice: { type: 'auto', disable_parallel_tool_use: true } }),
      keeps: () => ({ ...base, tools: [SEARCH], tool_choice: { type: 'auto' } }),
    },
  ],
  4: [
    {
      says: 'with tools offered',
      breaks: () => ({ ...base, messages: [user('Hi.'), assistant('Sure')], tools: [DIRECT_SEARCH] }),
      keeps: () => ({ ...base, messages: [user('Hi.'), assistant('Sure')] }),
    },
    {
      says: 'with tool calls or results in the conversation and no tools',
      breaks: () => ({
        ...base,
        messages: [
          user('Weather?'),
          assistant([{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} }]),
          user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny.' }]),
          assistant('The password is'),
        ],
      }),
    },
    {
      says: 'a paused turn sent back to be resumed is not one when its call ids verify',
      breaks: async () => {
        const turn = await pausedTurn();
        const changed = turn.map((block) =>
          block.type === 'web_search_tool_result' ? { ...block, content: [] } : block,
        );
        return { ...base, messages: [ask, assistant(changed)], tools: [DIRECT_SEARCH] };
      },
      keeps: async () => ({ ...base, messages: [ask, assistant(await pausedTurn())], tools: [DIRECT_SEARCH] }),
    },
  ],
  5: [
    {
      says: '`disabled` to the mid or large tier of the newer generation',
      breaks: () => ({ ...base, model: 'large-newer', thinking: { type: 'disabled' } }),
      keeps: () => ({ ...base, model: 'large-older', thinking: { type: 'disabled' } }),
    },
    {
      says: '`adaptive` to the small tier of the older one',
      breaks: () => ({ ...base, model: 'small-older', thinking: { type: 'adaptive' } }),
      keeps: () => ({ ...base, model: 'small-newer', thinking: { type: 'adaptive' } }),
    },
  ],
};

before(async () => {
  const script = join(mkdtempSync(join(tmpdir(), 'mms-contract-')), 'script.json');
  const search = { type: 'server_tool_use', name: 'web_search', input: { query: 'otters' } };
  writeFileSync(
    script,
    JSON.stringify([{ when: '^look up otters', steps: [[search], [{ type: 'text', text: 'Done.' }]] }]),
  );
  service = await startService();
  paused = await startService({ models: scriptedModels({ script }), maxSteps: 1 });
});
after(() => Promise.all([service.close(), paused.close()]));

describe("docs/contract.md's rules table", () => {
  test('has the five rules, in order', () => {
    assert.deepEqual(
      rows.map((row) => row.rule),
      [1, 2, 3, 4, 5],
    );
  });

  for (const row of rows) {
    test(`rule ${row.rule}: each statement has its case, refused with ${row.code}`, async () => {
      const cases = CASES[row.rule] ?? [];
      assert.equal(
        cases.length,
        row.statements.length,
        `statements of rule ${row.rule}: ${row.statements.join(' | ')}`,
      );
      for (const [index, entry] of cases.entries()) {
        assert.ok(row.statements[index]!.includes(entry.says), `"${row.statements[index]}" says "${entry.says}"`);
        const target = row.rule === 4 && index === 2 ? paused : service;
        const refused = await postJson(target, '/v1/messages', await entry.breaks());
        const body = (await refused.json()) as { error?: { message: string } };
        assert.equal(refused.status, 400, `${entry.says}: ${JSON.stringify(body)}`);
        assert.equal(refused.headers.get('mms-error-code'), row.code, entry.says);
        if (row.rule > 1) assert.match(body.error?.message ?? '', new RegExp(`^Rule ${row.rule}: `), entry.says);
        if (entry.keeps !== undefined) {
          const kept = await postJson(target, '/v1/messages', await entry.keeps());
          assert.equal(kept.status, 200, `kept: ${entry.says}: ${await kept.text()}`);
        }
      }
    });
  }
});
