/**
 * The end of a llama.cpp generation that called tools by the model's own chat format: each
 * call becomes a tool_use block; a strict tool's input that misses its schema is generated
 * again under the grammar; a non-strict tool's input passes as written, and streams as it is
 * generated (issue 32); a call cut by max_tokens is kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LlamaChatResponse } from 'node-llama-cpp';
import { finishParts, type GenerationInput } from '../src/backends/llama-cpp/generate-response.js';
import { planGeneration } from '../src/backends/llama-cpp/generation-plan.js';
import { FunctionCallStream } from '../src/backends/llama-cpp/function-call-stream.js';
import { ResponseEmitter } from '../src/backends/llama-cpp/response-emitter.js';
import type { OfferedTool } from '../src/backends/call/model-call.js';
import { BlockAssembler } from '../src/streaming/block-assembler.js';
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
  const input = generationInput(
    () => meter.spent,
    async (tool: OfferedTool, maxTokens: number) => {
      repaired.push(tool.name);
      meter.repairBudgets.push(maxTokens);
      meter.spent += meter.repairCost;
      return { text: '{"city":"Oslo"}', truncated: false };
    },
  );
  parts.push(...(await finishParts(responseWithCalls(calls), input, emitter)));
  return parts;
}

/** What finishParts reads of a generation of `request` with a step budget of 100 tokens. */
function generationInput(
  spentTokens: () => number,
  regenerateInput?: GenerationInput['regenerateInput'],
): GenerationInput {
  return {
    call: request,
    plan: planGeneration(request),
    outputBudget: 100,
    inputTokens: { type: 'input-tokens', count: 20, cacheRead: 0, cacheCreation: 0 },
    spentTokens,
    regenerateInput,
  } as unknown as GenerationInput;
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

/** Parameter chunks as node-llama-cpp reports them, each call's last one with its closing newlines. */
function paramsChunks(calls: Array<{ functionName: string; pieces: string[] }>) {
  return calls.flatMap((call, callIndex) =>
    call.pieces.map((paramsChunk, index) => ({
      callIndex,
      functionName: call.functionName,
      paramsChunk: index === call.pieces.length - 1 ? `${paramsChunk}\n\n\n\n` : paramsChunk,
      done: index === call.pieces.length - 1,
    })),
  );
}

test("a call of a tool without strict streams its parameters as they come; a strict one, and every call after it, is held for the check and keeps the model's order", async () => {
  const parts: StreamPart[] = [];
  const emitter = new ResponseEmitter((part) => parts.push(part), { kind: 'text' });
  const stream = new FunctionCallStream(emitter, request.tools);
  const chunks = paramsChunks([
    { functionName: 'note', pieces: ['{"text": ', '"a"}'] },
    { functionName: 'weather', pieces: ['{"city": ', '"Paris"}'] },
    { functionName: 'note', pieces: ['{"text": ', '"b"}'] },
  ]);
  chunks.forEach((chunk) => stream.paramsChunk(chunk));
  // Whitespace at a chunk's end waits for what follows it: the closing newlines are not the input's.
  assert.deepEqual(
    parts.flatMap((part) => (part.type === 'block-delta' ? [part.delta] : [])),
    [
      { type: 'input_json_delta', partial_json: '{"text":' },
      { type: 'input_json_delta', partial_json: ' "a"}' },
    ],
  );
  const calls = responseWithCalls([
    { functionName: 'note', params: { text: 'a' } },
    { functionName: 'weather', params: { city: 'Paris' } },
    { functionName: 'note', params: { text: 'b' } },
  ]);
  const input = generationInput(() => 0);
  parts.push(...(await finishParts(calls, input, emitter, stream)));
  const assembler = new BlockAssembler();
  for (const part of parts) {
    if (part.type === 'block-start') assembler.start(part.block);
    if (part.type === 'block-delta') assembler.delta(part.delta);
    if (part.type === 'block-stop') assembler.stop();
  }
  assert.deepEqual(
    assembler.blocks.map((block) => block.type === 'tool_use' && [block.name, block.input]),
    [
      ['note', { text: 'a' }],
      ['weather', { city: 'Paris' }],
      ['note', { text: 'b' }],
    ],
  );
});

test('a held call cut by max_tokens is kept as far as its parameters came, unchecked', async () => {
  const parts: StreamPart[] = [];
  const emitter = new ResponseEmitter((part) => parts.push(part), { kind: 'text' });
  const stream = new FunctionCallStream(emitter, request.tools);
  stream.paramsChunk({ callIndex: 0, functionName: 'weather', paramsChunk: '{"city": "Par', done: false });
  const cut = { ...responseWithCalls([]), metadata: { stopReason: 'maxTokens' } } as unknown as LlamaChatResponse;
  const input = generationInput(() => 100);
  parts.push(...(await finishParts(cut, input, emitter, stream)));
  const delta = parts.find((part) => part.type === 'block-delta');
  assert.deepEqual(delta, { type: 'block-delta', delta: { type: 'input_json_delta', partial_json: '{"city": "Par' } });
  assert.deepEqual(parts.at(-1), { type: 'finish', stopReason: 'max_tokens', stopSequence: null });
});
