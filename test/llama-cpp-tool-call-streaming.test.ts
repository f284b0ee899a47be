/**
 * A tool call's input on the embedded engine as the public API gives it (issue 32): streamed as
 * it is generated, in several `input_json_delta` events, and kept as a partial `tool_use` block
 * when `max_tokens` cuts the call, on every output path: a forced tool, `tool_choice: any` with
 * several tools (the `{"name", "input"}` envelope under its grammar), and a call the model opens
 * in its own chat format under `auto` (its input under the tool's grammar, issue 35). Tiny
 * scripted models (packages/testing/src/gguf/) write the calls, one token per piece, so a test
 * knows where a budget cuts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  postJson,
  qwenTurnPieces,
  readSse,
  scriptedQwenModel,
  startService,
  type RunningService,
} from '@model-messages/testing';

const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const TIME = {
  name: 'get_time',
  description: 'The time in a zone.',
  input_schema: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
};
const STRICT_WEATHER = { ...WEATHER, strict: true };

interface Block {
  type: string;
  name?: string;
  input?: unknown;
}

interface Reply {
  content: Block[];
  stop_reason: string;
  usage: { output_tokens: number };
}

let service: RunningService;
before(async () => {
  // The envelope of one call among several tools, each piece one its grammar accepts: the head
  // up to the input, then the input in three pieces.
  const envelope = await scriptedQwenModel(
    qwenTurnPieces({ text: ['{"name": "', 'get_weather', '", "input": {"city": "', 'Par', 'is', '"}}'] }),
  );
  // A forced tool's input.
  const forced = await scriptedQwenModel(qwenTurnPieces({ text: ['{"city": "', 'Lyo', 'n', '"}'] }));
  // A call in Qwen's own syntax, parsed by node-llama-cpp's function calling.
  const speaker = await scriptedQwenModel(
    qwenTurnPieces({ call: { name: 'get_weather', argumentPieces: ['{"city": "', 'Nan', 'tes', '"}'] } }),
  );
  const entry = (id: string, model: string) => ({
    id,
    tier: 'mid' as const,
    generation: 'older' as const,
    contextWindow: 2048,
    maxOutputTokens: 512,
    backend: { type: 'llama-cpp' as const, model, threads: 1, chatWrapper: 'qwen' as const },
  });
  service = await startService({
    models: [entry('envelope', envelope), entry('forced', forced), entry('speaker', speaker)],
  });
});
after(() => service.close());

function body(model: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    model,
    max_tokens: 200,
    temperature: 0,
    messages: [{ role: 'user', content: 'Weather?' }],
    ...extra,
  };
}

async function ask(model: string, extra: Record<string, unknown>): Promise<Reply> {
  const response = await postJson(service, '/v1/messages', body(model, extra));
  const reply = (await response.json()) as Reply;
  assert.equal(response.status, 200, JSON.stringify(reply));
  return reply;
}

interface StreamEvent {
  type: string;
  content_block?: Block;
  delta?: { type: string; partial_json?: string; stop_reason?: string };
}

/** The streamed call: its block's name, its input_json_delta pieces, the stop reason. */
async function streamCall(
  model: string,
  extra: Record<string, unknown>,
): Promise<{ name: string | undefined; pieces: string[]; stopReason: string | undefined }> {
  const response = await postJson(service, '/v1/messages', body(model, { ...extra, stream: true }));
  assert.equal(response.status, 200);
  const events = (await readSse(response)).map((event) => event.data as StreamEvent);
  const start = events.find((event) => event.type === 'content_block_start');
  const pieces = events
    .filter((event) => event.type === 'content_block_delta' && event.delta?.type === 'input_json_delta')
    .map((event) => event.delta?.partial_json ?? '');
  const delta = events.find((event) => event.type === 'message_delta');
  assert.ok(delta, JSON.stringify(events));
  return { name: start?.content_block?.name, pieces, stopReason: delta.delta?.stop_reason };
}

const calls = (reply: Reply) => reply.content.filter((block) => block.type === 'tool_use');

describe("tool_choice any with several tools: the {name, input} envelope's input", () => {
  const choice = { tools: [WEATHER, TIME], tool_choice: { type: 'any' } };

  test('streams in several input_json_delta events once the name is known, which join into the input', async () => {
    const { name, pieces, stopReason } = await streamCall('envelope', choice);
    assert.equal(name, 'get_weather');
    assert.ok(pieces.length >= 3, JSON.stringify(pieces));
    assert.deepEqual(JSON.parse(pieces.join('')), { city: 'Paris' });
    assert.equal(stopReason, 'tool_use');
  });

  test('cut by max_tokens, is kept as a partial tool_use block, in JSON and in the stream', async () => {
    // Four tokens: the envelope's head, the name, the input's head and "Par".
    const reply = await ask('envelope', { ...choice, max_tokens: 4 });
    assert.equal(reply.stop_reason, 'max_tokens');
    assert.deepEqual(
      calls(reply).map((block) => [block.name, block.input]),
      [['get_weather', { city: 'Par' }]],
    );
    const streamed = await streamCall('envelope', { ...choice, max_tokens: 4 });
    assert.equal(streamed.name, 'get_weather');
    assert.equal(streamed.pieces.join(''), '{"city": "Par');
    assert.equal(streamed.stopReason, 'max_tokens');
  });
});

describe("a forced tool's input", () => {
  const choice = { tools: [WEATHER, TIME], tool_choice: { type: 'tool', name: 'get_weather' } };

  test('streams in several input_json_delta events which join into the input', async () => {
    const { name, pieces } = await streamCall('forced', choice);
    assert.equal(name, 'get_weather');
    assert.ok(pieces.length >= 3, JSON.stringify(pieces));
    assert.deepEqual(JSON.parse(pieces.join('')), { city: 'Lyon' });
  });

  test('cut by max_tokens, is kept as a partial tool_use block', async () => {
    for (const tool_choice of [choice.tool_choice, { type: 'any' }]) {
      // `any` with one tool is a forced call of it.
      const tools = tool_choice.type === 'any' ? [WEATHER] : choice.tools;
      const reply = await ask('forced', { tools, tool_choice, max_tokens: 2 });
      assert.equal(reply.stop_reason, 'max_tokens');
      assert.deepEqual(
        calls(reply).map((block) => [block.name, block.input]),
        [['get_weather', { city: 'Lyo' }]],
      );
    }
  });
});

describe('tool_choice auto: a call the model opens in its chat format', () => {
  test('a call of a tool without strict streams its input in several input_json_delta events', async () => {
    const { name, pieces, stopReason } = await streamCall('speaker', { tools: [WEATHER] });
    assert.equal(name, 'get_weather');
    assert.ok(pieces.length >= 3, JSON.stringify(pieces));
    assert.deepEqual(JSON.parse(pieces.join('')), { city: 'Nantes' });
    assert.equal(stopReason, 'tool_use');
  });

  test("a call of a strict tool streams too: its input is generated under the schema's own grammar", async () => {
    const { name, pieces } = await streamCall('speaker', { tools: [STRICT_WEATHER] });
    assert.equal(name, 'get_weather');
    assert.ok(pieces.length >= 3, JSON.stringify(pieces));
    assert.deepEqual(JSON.parse(pieces.join('')), { city: 'Nantes' });
  });

  for (const tool of [WEATHER, STRICT_WEATHER]) {
    test(`cut by max_tokens, a call is kept as a partial tool_use block (strict ${tool === STRICT_WEATHER})`, async () => {
      const full = await ask('speaker', { tools: [tool] });
      assert.deepEqual(
        calls(full).map((block) => block.input),
        [{ city: 'Nantes' }],
      );
      // Four tokens short of the whole turn: "tes", '"}', the end of the input's generation and
      // the end of the turn after the call are not written.
      const reply = await ask('speaker', { tools: [tool], max_tokens: full.usage.output_tokens - 4 });
      assert.equal(reply.stop_reason, 'max_tokens');
      assert.deepEqual(
        calls(reply).map((block) => [block.name, block.input]),
        [['get_weather', { city: 'Nan' }]],
      );
    });
  }
});
