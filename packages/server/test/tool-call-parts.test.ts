/**
 * The end of a llama.cpp generation that called tools by the model's own chat format: each
 * call becomes a tool_use block; a strict tool's input that misses its schema is generated
 * again under the grammar; a non-strict tool's input passes as written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LlamaChatResponse } from 'node-llama-cpp';
import { finishParts, type GenerationInput } from '../src/backends/llama-cpp/generate-response.js';
import { planGeneration } from '../src/backends/llama-cpp/generation-plan.js';
import { ResponseEmitter } from '../src/backends/llama-cpp/response-emitter.js';
import type { OfferedTool } from '../src/backends/call/model-call.js';
import type { StreamPart } from '../src/streaming/stream-part.js';
import { callOf } from './model-call-support.js';

const strictSchema = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};
const body = {
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Weather?' }],
  tools: [
    { name: 'weather', description: 'Weather for a city.', strict: true, input_schema: strictSchema },
    {
      name: 'note',
      description: 'Take a note.',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
  ],
};
const request = callOf(body);

function responseWithCalls(calls: Array<{ functionName: string; params: unknown }>): LlamaChatResponse {
  return {
    response: '',
    fullResponse: [],
    functionCalls: calls.map((call) => ({ ...call, raw: [] })),
    lastEvaluation: {},
    metadata: { stopReason: 'functionCalls' },
  } as unknown as LlamaChatResponse;
}

/** The step's output meter: what the first pass spent, plus what each repair spends. */
interface Meter {
  spent: number;
  /** Tokens one repair spends. */
  repairCost: number;
  /** The maxTokens each repair was given. */
  repairBudgets: number[];
}

async function finish(
  calls: Array<{ functionName: string; params: unknown }>,
  repaired: string[],
  meter: Meter = { spent: 0, repairCost: 0, repairBudgets: [] },
): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  const emitter = new ResponseEmitter((part) => parts.push(part), { kind: 'text' });
  emitter.outputTokens = meter.spent;
  const input = {
    call: request,
    plan: planGeneration(request),
    outputBudget: 100,
    inputTokens: { type: 'input-tokens', count: 20, cacheRead: 0, cacheCreation: 0 },
    spentTokens: () => meter.spent,
    regenerateInput: async (tool: OfferedTool, maxTokens: number) => {
      repaired.push(tool.name);
      meter.repairBudgets.push(maxTokens);
      meter.spent += meter.repairCost;
      return { text: '{"city":"Oslo"}', truncated: false };
    },
  } as unknown as GenerationInput;
  parts.push(...(await finishParts(responseWithCalls(calls), input, emitter)));
  return parts;
}

function toolUses(parts: StreamPart[]): Array<{ name: string; input: unknown }> {
  const uses: Array<{ name: string; input: unknown }> = [];
  parts.forEach((part, index) => {
    const next = parts[index + 1];
    if (
      part.type === 'block-start' &&
      part.block.type === 'tool_use' &&
      next?.type === 'block-delta' &&
      next.delta.type === 'input_json_delta'
    ) {
      uses.push({ name: part.block.name, input: JSON.parse(next.delta.partial_json) });
    }
  });
  return uses;
}

test('auto tools are offered to the model by its chat format', () => {
  assert.deepEqual(Object.keys(planGeneration(request).functions ?? {}), ['weather', 'note']);
  assert.equal(planGeneration(callOf({ ...body, tool_choice: { type: 'none' } })).functions, undefined);
});

test('valid calls become tool_use blocks with stop_reason tool_use', async () => {
  const repaired: string[] = [];
  const parts = await finish(
    [
      { functionName: 'weather', params: { city: 'Paris' } },
      { functionName: 'note', params: { text: 'hi' } },
    ],
    repaired,
  );
  assert.deepEqual(toolUses(parts), [
    { name: 'weather', input: { city: 'Paris' } },
    { name: 'note', input: { text: 'hi' } },
  ]);
  assert.deepEqual(parts.at(-1), { type: 'finish', stopReason: 'tool_use', stopSequence: null });
  assert.deepEqual(repaired, []);
});

test("a strict tool's invalid input is generated again under the grammar; a non-strict one passes as written", async () => {
  const repaired: string[] = [];
  const parts = await finish(
    [
      { functionName: 'weather', params: { town: 'Paris' } },
      { functionName: 'note', params: { words: 1 } },
    ],
    repaired,
  );
  assert.deepEqual(repaired, ['weather']);
  assert.deepEqual(toolUses(parts), [
    { name: 'weather', input: { city: 'Oslo' } },
    { name: 'note', input: { words: 1 } },
  ]);
});

test("a repair spends from the step's budget: it gets what is left, and usage counts it", async () => {
  const meter: Meter = { spent: 30, repairCost: 25, repairBudgets: [] };
  const parts = await finish([{ functionName: 'weather', params: { town: 'Paris' } }], [], meter);
  assert.deepEqual(meter.repairBudgets, [70]);
  assert.deepEqual(
    parts.find((part) => part.type === 'output-tokens'),
    { type: 'output-tokens', count: 55 },
  );
});

test('a strict call that fails with no budget left is a 502, not a repair', async () => {
  const repaired: string[] = [];
  await assert.rejects(
    finish([{ functionName: 'weather', params: { town: 'Paris' } }], repaired, {
      spent: 100,
      repairCost: 0,
      repairBudgets: [],
    }),
    (error: Error & { code?: string }) => error.code === 'model_output_invalid' && /weather/.test(error.message),
  );
  assert.deepEqual(repaired, []);
});
