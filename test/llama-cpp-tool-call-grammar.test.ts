/**
 * Issue 35 on the embedded engine: every call the model opens in its chat format, under
 * tool_choice auto, carries input valid against its tool's schema, for tools without `strict`
 * too. Tiny scripted GGUF models (packages/testing/src/gguf/) open a Qwen `<tool_call>` naming one
 * of Claude Code's recorded tools and then babble: their script ends at the name, so every token
 * of the input is sampled at random among those the grammar allows. Claude Code's schemas bound
 * integers, lengths and run ids by pattern, make most fields optional and forbid others: each
 * input is checked here by Ajv against the tool's whole schema.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { schemaViolation } from '@model-messages/protocol';
import {
  claudeCodeToolsWithoutProse,
  postJson,
  readSse,
  scriptedQwenModel,
  startService,
  type RunningService,
} from '@model-messages/testing';

interface Block {
  type: string;
  name?: string;
  input?: unknown;
}

const tools = claudeCodeToolsWithoutProse();

/** Bounded integers, enums and required fields; string bounds; a pattern and a bound the grammar leaves to the check. */
const BABBLED = ['Read', 'Agent', 'ListAgents', 'Workflow', 'ReportFindings'];
const REQUESTS_PER_TOOL = 8;

let service: RunningService;
before(async () => {
  const models = [];
  for (const name of BABBLED) {
    // The call's opening and its name; the input is the model's own babble. node-llama-cpp writes
    // the opening again in its own tokens, which end in ' "': the name follows that token.
    const model = await scriptedQwenModel(['<tool_call>', '\n{"name": "', ' "', name, '<|im_end|>'], {
      contextLength: 8192,
    });
    models.push(entry(`opens-${name}`, model));
  }
  // One call, written whole, then the same again, until the budget ends the turn.
  const repeats = await scriptedQwenModel(
    [
      '<tool_call>',
      '\n{"name": "',
      ' "',
      'Read',
      ' ',
      '{"file_path": "',
      'a.txt',
      '"}',
      '}\n',
      '</tool_call>',
      '<tool_call>',
    ],
    { contextLength: 8192 },
  );
  models.push(entry('repeats', repeats));
  service = await startService({ models });
});
after(() => service.close());

function entry(id: string, model: string) {
  return {
    id,
    tier: 'mid' as const,
    generation: 'older' as const,
    contextWindow: 8192,
    maxOutputTokens: 2048,
    backend: { type: 'llama-cpp' as const, model, threads: 1, chatWrapper: 'qwen' as const },
  };
}

async function ask(
  model: string,
  extra: Record<string, unknown> = {},
): Promise<{ content: Block[]; stop_reason: string }> {
  const response = await postJson(service, '/v1/messages', {
    model,
    max_tokens: 1500,
    temperature: 1,
    messages: [{ role: 'user', content: 'Go on.' }],
    tools,
    ...extra,
  });
  const reply = (await response.json()) as { content: Block[]; stop_reason: string };
  assert.equal(response.status, 200, JSON.stringify(reply));
  return reply;
}

describe('a call the model opens and then babbles', () => {
  for (const name of BABBLED) {
    test(`${name}: the input is valid against the whole schema, every time`, async () => {
      const schema = tools.find((tool) => tool.name === name)!.input_schema;
      for (let request = 0; request < REQUESTS_PER_TOOL; request += 1) {
        // One call: a babbling model goes on calling tools at random after it (below).
        const reply = await ask(`opens-${name}`, { tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
        const calls = reply.content.filter((block) => block.type === 'tool_use');
        assert.deepEqual(
          calls.map((block) => block.name),
          [name],
          JSON.stringify(reply.content),
        );
        assert.equal(reply.stop_reason, 'tool_use');
        assert.equal(schemaViolation(schema, calls[0]!.input), undefined, JSON.stringify(calls[0]!.input));
      }
    });
  }

  test('after its call the model goes on babbling: every further call it makes is valid too', async () => {
    const reply = await ask('opens-Read', { max_tokens: 400 });
    const calls = reply.content.filter((block) => block.type === 'tool_use');
    assert.equal(calls[0]?.name, 'Read', JSON.stringify(reply.content));
    // The last call may be cut by max_tokens: it is kept as it came, unchecked.
    const whole = reply.stop_reason === 'max_tokens' ? calls.slice(0, -1) : calls;
    for (const call of whole) {
      const schema = tools.find((tool) => tool.name === call.name)!.input_schema;
      assert.equal(schemaViolation(schema, call.input), undefined, `${call.name} ${JSON.stringify(call.input)}`);
    }
  });

  test('streamed, the input arrives in input_json_delta events that join into the valid input', async () => {
    const schema = tools.find((tool) => tool.name === 'Read')!.input_schema;
    const response = await postJson(service, '/v1/messages', {
      model: 'opens-Read',
      max_tokens: 1500,
      stream: true,
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      messages: [{ role: 'user', content: 'Go on.' }],
      tools,
    });
    const events = (await readSse(response)).map(
      (event) => event.data as { type: string; delta?: { partial_json?: string } },
    );
    const pieces = events.flatMap((event) =>
      event.type === 'content_block_delta' && event.delta?.partial_json !== undefined ? [event.delta.partial_json] : [],
    );
    assert.ok(pieces.length > 1, JSON.stringify(pieces));
    assert.equal(schemaViolation(schema, JSON.parse(pieces.join(''))), undefined, pieces.join(''));
  });
});

describe('parallel calls', () => {
  test('each call the model makes in one turn is a block of its own, in order', async () => {
    const reply = await ask('repeats', { max_tokens: 60, temperature: 0 });
    const calls = reply.content.filter((block) => block.type === 'tool_use');
    assert.ok(calls.length >= 2, JSON.stringify(reply.content));
    for (const call of calls.slice(0, -1)) assert.deepEqual([call.name, call.input], ['Read', { file_path: 'a.txt' }]);
    assert.equal(reply.stop_reason, 'max_tokens', 'the last call, cut, is kept as it came');
  });

  test('with disable_parallel_tool_use the turn ends after the first call', async () => {
    const reply = await ask('repeats', {
      max_tokens: 60,
      temperature: 0,
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    });
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.name, block.input]),
      [['tool_use', 'Read', { file_path: 'a.txt' }]],
    );
    assert.equal(reply.stop_reason, 'tool_use');
  });
});
