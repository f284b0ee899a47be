/**
 * A model that speaks its own tool syntax on the embedded engine: a tiny GGUF whose weights are a
 * bigram table (packages/testing/src/gguf/scripted-weights.ts) writes, under Qwen3's chat template
 * and control tokens, a thought and then a `<tool_call>` in Qwen's syntax, so node-llama-cpp's own
 * parsing of the model's output runs: the thought becomes a signed thinking block, the call a
 * tool_use block, its input generated under mms's grammar of the tool's schema (issue 35), so
 * an input the model would write against its schema never reaches the caller.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  postJson,
  qwenTurnPieces,
  scriptedQwenModel,
  startService,
  type RunningService,
} from '@model-messages/testing';

interface Reply {
  content: Array<{ type: string; thinking?: string; signature?: string; name?: string; input?: unknown }>;
  stop_reason: string;
}

const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** A schema node-llama-cpp's own grammar reads as any JSON (it follows only `#/$defs/` references), mms's exactly. */
const STRICT_WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city.',
  strict: true,
  input_schema: {
    type: 'object',
    properties: { city: { $ref: '#/definitions/city' } },
    required: ['city'],
    additionalProperties: false,
    definitions: { city: { type: 'string' } },
  },
};

let service: RunningService;
before(async () => {
  const speaks = await scriptedQwenModel(
    qwenTurnPieces({
      thinking: 'The user wants the weather in Paris.',
      call: { name: 'get_weather', argumentPieces: ['{"city": "Paris"}'] },
    }),
  );
  // The same call with a number where the schema wants a string.
  const misses = await scriptedQwenModel(
    qwenTurnPieces({ thinking: 'A number will do.', call: { name: 'get_weather', argumentPieces: ['{"city": 75}'] } }),
  );
  const entry = (id: string, model: string, chatWrapper: 'qwen' | 'auto') => ({
    id,
    tier: 'mid' as const,
    generation: 'older' as const,
    contextWindow: 2048,
    maxOutputTokens: 512,
    backend: { type: 'llama-cpp' as const, model, threads: 1, chatWrapper },
  });
  service = await startService({
    models: [
      entry('speaker', speaks, 'qwen'),
      entry('speaker-own-template', speaks, 'auto'),
      entry('misser', misses, 'qwen'),
    ],
  });
});
after(() => service.close());

async function ask(model: string, tools: unknown[], extra: Record<string, unknown> = {}): Promise<Reply> {
  const response = await postJson(service, '/v1/messages', {
    model,
    max_tokens: 200,
    temperature: 0,
    thinking: { type: 'adaptive' },
    tools,
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    ...extra,
  });
  const body = (await response.json()) as Reply;
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}

test("Qwen's <think> and <tool_call> become a signed thinking block and a tool_use block, stop_reason tool_use", async () => {
  const reply = await ask('speaker', [WEATHER]);
  assert.deepEqual(
    reply.content.map((block) => block.type),
    ['thinking', 'tool_use'],
    JSON.stringify(reply.content),
  );
  const [thinking, call] = reply.content;
  assert.equal(thinking!.thinking, 'The user wants the weather in Paris.');
  assert.match(thinking!.signature ?? '', /^mms1\./);
  assert.deepEqual([call!.name, call!.input], ['get_weather', { city: 'Paris' }]);
  assert.equal(reply.stop_reason, 'tool_use');
});

test('with thinking off the thought is not shown, and the call is made all the same', async () => {
  const reply = await ask('speaker', [WEATHER], { thinking: { type: 'disabled' } });
  const calls = reply.content.filter((block) => block.type === 'tool_use');
  assert.deepEqual(
    calls.map((block) => [block.name, block.input]),
    [['get_weather', { city: 'Paris' }]],
  );
  assert.ok(!reply.content.some((block) => block.type === 'thinking'), JSON.stringify(reply.content));
  assert.equal(reply.stop_reason, 'tool_use');
});

test("under the model's own template (chatWrapper auto: Qwen3's Jinja), the call is parsed into a tool_use block", async () => {
  const reply = await ask('speaker-own-template', [WEATHER]);
  const calls = reply.content.filter((block) => block.type === 'tool_use');
  assert.deepEqual(
    calls.map((block) => [block.name, block.input]),
    [['get_weather', { city: 'Paris' }]],
    JSON.stringify(reply.content),
  );
  assert.equal(reply.stop_reason, 'tool_use');
});

test("a free call of a strict tool is held to its schema by mms's grammar as it is generated", async () => {
  const reply = await ask('misser', [STRICT_WEATHER]);
  const calls = reply.content.filter((block) => block.type === 'tool_use');
  assert.equal(calls.length, 1, JSON.stringify(reply.content));
  const input = calls[0]!.input as { city: unknown };
  // The model wrote 75; what reaches the caller holds to the schema.
  assert.equal(typeof input.city, 'string', JSON.stringify(input));
  assert.deepEqual(Object.keys(input), ['city']);
  assert.equal(reply.stop_reason, 'tool_use');
});
