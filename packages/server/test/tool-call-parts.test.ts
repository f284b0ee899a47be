/**
 * The calls a model opens in its chat format on the embedded engine (issue 35,
 * template-calls.ts): each call's input is generated after the call's opening under its tool's
 * grammar; an input under a grammar that is exactly its schema streams as it comes, one under a
 * wider grammar is held, checked against the whole schema and generated again on a failure;
 * parallel calls are blocks of their own, in order; a call cut by max_tokens is kept. The
 * generations are played by a stand-in for LlamaChat, so these run without a model.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LlamaText, QwenChatWrapper, type LlamaChatResponseChunk, type LlamaGrammar } from 'node-llama-cpp';
import { planGeneration } from '../src/backends/llama-cpp/generation-plan.js';
import { callSyntax } from '../src/backends/llama-cpp/call-syntax.js';
import { ResponseEmitter } from '../src/backends/llama-cpp/response-emitter.js';
import {
  generateTemplateCalls,
  type CallingResponse,
  type ContinuedPhase,
} from '../src/backends/llama-cpp/template-calls.js';
import type { OfferedTool } from '../src/backends/call/model-call.js';
import type { StreamPart } from '../src/streaming/stream-part.js';
import { callOf } from './model-call-support.js';

const body = {
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Weather?' }],
  tools: [
    {
      name: 'weather',
      description: 'Weather for a city.',
      strict: true,
      input_schema: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      },
    },
    {
      name: 'note',
      description: 'Take a note.',
      input_schema: {
        type: 'object',
        properties: { text: { type: 'string', maxLength: 300 } },
        required: ['text'],
      },
    },
  ],
};
const request = callOf(body);
const wrapper = new QwenChatWrapper();
const grammar = {} as LlamaGrammar;

/** A generation as LlamaChat answers it. */
function response(stopReason: string, options: { text?: string; opens?: string } = {}): CallingResponse {
  return {
    response: options.text ?? '',
    fullResponse: options.text ? [options.text] : [],
    functionCalls: options.opens ? [{ functionName: options.opens, params: undefined, raw: [] }] : undefined,
    lastEvaluation: { cleanHistory: [], contextWindow: [], contextShiftMetadata: null },
    metadata: { stopReason },
  } as unknown as CallingResponse;
}

function chunk(text: string): LlamaChatResponseChunk {
  return { type: undefined, text, tokens: [1], segmentType: undefined } as unknown as LlamaChatResponseChunk;
}

/** One scripted generation: the input's pieces (an input phase), or text and the call it opens (a free one). */
type Scripted = { input: string[]; cut?: boolean } | { text?: string; opens?: string };

interface Run {
  parts: StreamPart[];
  /** The text after the history each generation went on from, and its kind. */
  tails: Array<{ kind: ContinuedPhase['kind']; tail: string }>;
  regenerated: string[];
  stopReason: string;
  called: boolean;
}

async function run(
  first: string,
  script: Scripted[],
  options: { exact?: boolean; singleCall?: boolean; spent?: number; regenerated?: string; parts?: StreamPart[] } = {},
): Promise<Run> {
  const parts: StreamPart[] = options.parts ?? [];
  const tails: Run['tails'] = [];
  const regenerated: string[] = [];
  const emitter = new ResponseEmitter((part) => parts.push(part), { kind: 'text' });
  let spent = options.spent ?? 0;
  const { last, called } = await generateTemplateCalls(response('functionCalls', { opens: first }), {
    tools: request.tools,
    syntax: callSyntax(wrapper),
    chatWrapper: wrapper,
    emitter,
    settling: {
      remaining: () => 100 - spent,
      regenerateInput: async (tool: OfferedTool) => {
        regenerated.push(tool.name);
        spent += 10;
        return { text: options.regenerated ?? '{"text":"short"}', truncated: false };
      },
    },
    singleCall: options.singleCall === true,
    guideFor: async (tool) => ({ grammar, exact: options.exact ?? tool.strict }),
    continueTurn: async (tail: LlamaText, phase: ContinuedPhase) => {
      tails.push({ kind: phase.kind, tail: tail.toString() });
      const next = script.shift();
      if (!next) throw new Error('the script ran out');
      if (phase.kind === 'input') {
        if (!('input' in next)) throw new Error('an input phase was scripted as free');
        for (const piece of next.input) {
          spent += 1;
          phase.input.chunk(chunk(piece));
        }
        return response(next.cut ? 'maxTokens' : 'eogToken', { text: next.input.join('') });
      }
      if ('input' in next) throw new Error('a free phase was scripted as an input');
      return response(next.opens ? 'functionCalls' : 'eogToken', next);
    },
  });
  emitter.close();
  return { parts, tails, regenerated, stopReason: last.metadata.stopReason, called };
}

/** The blocks of the parts, each with its input deltas and the outcome reported before its stop. */
function blocks(parts: StreamPart[]): Array<{ name: string; deltas: string[]; outcome?: string }> {
  const found: Array<{ name: string; deltas: string[]; outcome?: string }> = [];
  for (const part of parts) {
    if (part.type === 'block-start' && part.block.type === 'tool_use')
      found.push({ name: part.block.name, deltas: [] });
    if (part.type === 'block-delta' && part.delta.type === 'input_json_delta')
      found.at(-1)!.deltas.push(part.delta.partial_json);
    if (part.type === 'tool-call-outcome') found.at(-1)!.outcome = part.outcome;
  }
  return found;
}

test('auto tools are documented to the model with their parameters, and given to node-llama-cpp by name only', () => {
  const plan = planGeneration(request);
  assert.deepEqual(Object.keys(plan.functions ?? {}), ['weather', 'note']);
  assert.ok(plan.functions?.weather?.params, 'the prompt documents the parameters');
  assert.deepEqual(plan.functionNames, {
    weather: { description: 'Weather for a city.' },
    note: { description: 'Take a note.' },
  });
  assert.equal(planGeneration(callOf({ ...body, tool_choice: { type: 'none' } })).functionNames, undefined);
});

test("an input under its schema's own grammar streams as it is generated; parallel calls are blocks of their own, in order", async () => {
  const { parts, tails, stopReason, called } = await run('weather', [
    { input: ['{"city": ', '"Paris"}'] },
    { text: '\n', opens: 'weather' },
    { input: ['{"city": "Rome"}'] },
    {},
  ]);
  assert.deepEqual(blocks(parts), [
    { name: 'weather', deltas: ['{"city": ', '"Paris"}'], outcome: 'clean' },
    { name: 'weather', deltas: ['{"city": "Rome"}'], outcome: 'clean' },
  ]);
  assert.equal(called, true);
  assert.equal(stopReason, 'eogToken');
  // Each generation goes on after the calls written so far, in the chat format's own words.
  const first = '<tool_call>\n{"name": "weather", "arguments": ';
  assert.deepEqual(tails, [
    { kind: 'input', tail: first },
    { kind: 'free', tail: `${first}{"city": "Paris"}}\n</tool_call>` },
    { kind: 'input', tail: `${first}{"city": "Paris"}}\n</tool_call>\n${first}` },
    { kind: 'free', tail: `${first}{"city": "Paris"}}\n</tool_call>\n${first}{"city": "Rome"}}\n</tool_call>` },
  ]);
});

test('an input under a grammar wider than its schema is held, checked against the whole schema, and generated again on a failure', async () => {
  const long = 'x'.repeat(301);
  const { parts, regenerated } = await run('note', [{ input: ['{"text": "', long, '"}'] }, {}]);
  assert.deepEqual(regenerated, ['note']);
  assert.deepEqual(blocks(parts), [{ name: 'note', deltas: ['{"text":"short"}'], outcome: 'repaired' }]);
});

test('a held input that passes is one delta, after it is whole', async () => {
  const { parts, regenerated } = await run('note', [{ input: ['{"text": ', '"hi"}'] }, {}]);
  assert.deepEqual(regenerated, []);
  assert.deepEqual(blocks(parts), [{ name: 'note', deltas: ['{"text":"hi"}'], outcome: 'clean' }]);
});

test('a held input that fails with no budget left is a 502, its outcome reported first', async () => {
  const parts: StreamPart[] = [];
  await assert.rejects(
    run('note', [{ input: ['{"words": 1}'] }], { spent: 99, parts }),
    (error: Error & { code?: string }) => error.code === 'model_output_invalid' && /note/.test(error.message),
  );
  assert.deepEqual(parts, [{ type: 'tool-call-outcome', outcome: 'failed' }], 'no block of the call');
});

test('a call cut by max_tokens is kept as far as it came, streamed or held, and ends the turn', async () => {
  for (const exact of [true, false]) {
    const { parts, stopReason, called } = await run('note', [{ input: ['{"text": "No', 'te'], cut: true }], {
      exact,
    });
    assert.equal(stopReason, 'maxTokens');
    assert.equal(called, false);
    const [block] = blocks(parts);
    assert.equal(block?.deltas.join(''), '{"text": "Note');
    assert.equal(block?.outcome, undefined, 'a cut call is not checked');
  }
});

test('with disable_parallel_tool_use, or a chat format without parallel calls, the turn ends after the first call', async () => {
  const single = await run('weather', [{ input: ['{"city": "Oslo"}'] }], { singleCall: true });
  assert.equal(single.tails.length, 1);
  assert.equal(blocks(single.parts).length, 1);
  assert.equal(callSyntax(wrapper).parallel, true);
});
