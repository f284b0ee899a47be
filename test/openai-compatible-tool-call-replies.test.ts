/**
 * Every recorded tool-call reply (packages/testing/fixtures/tool-call-replies, issue 35) through
 * the service and the fake engine of its kind, folded and streamed, and streamed again with the
 * engine's pieces cut in odd sizes: calls left in the text become tool_use blocks, broken input
 * is repaired once under the engine's structured-output option, a failed repair is said, and
 * what only looks like a call stays text; mms_tool_calls_total counts how each call went.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  engineStream,
  expectedOutcome,
  jsonReplyOutcome,
  postJson,
  rechunked,
  sseReplyOutcome,
  toolCallReplies,
  toolsNamed,
  type EngineAnswer,
  type ToolCallReply,
} from '@model-messages/testing';
import { useEngines, user } from './openai-compatible-support.js';

/** The service's access lines (`msg: "request"`), by request id. */
const accessLines = new Map<string, Record<string, unknown>>();
const bench = useEngines({
  log: {
    level: 'info',
    destination: {
      write(text: string) {
        for (const line of text.split('\n').filter(Boolean)) {
          const value = JSON.parse(line) as Record<string, unknown>;
          if (value.msg === 'request') accessLines.set(value.reqId as string, value);
        }
      },
    },
  },
  variants: [
    { suffix: 'hermes-only', engine: 'vllm', backend: { textCallSyntaxes: ['hermes'] } },
    { suffix: 'no-text-calls', engine: 'vllm', backend: { textCallSyntaxes: [] } },
  ],
});
const REPLIES = toolCallReplies();

/** What the repair request carries to hold the engine to the tool's schema, by engine. */
const REPAIR_FIELD = {
  vllm: 'response_format',
  sglang: 'response_format',
  ollama: 'response_format',
  'llama.cpp': 'json_schema',
  generic: 'tool_choice',
} as const;

async function outcomeCounts(): Promise<Record<string, number>> {
  const response = await fetch(`${bench.service.baseURL}/metrics`, { headers: bench.service.headers });
  const counts: Record<string, number> = {};
  for (const match of (await response.text()).matchAll(/^mms_tool_calls_total\{([^}]*)\} (\S+)$/gm)) {
    const outcome = /outcome="([^"]*)"/.exec(match[1]!)![1]!;
    counts[outcome] = (counts[outcome] ?? 0) + Number(match[2]);
  }
  return counts;
}

/** The case replayed once: the engine answers with `answer` (and the repair), the client asks streamed or not. */
async function replay(reply: ToolCallReply, answer: EngineAnswer, stream: boolean) {
  const engine = bench.engines[reply.engine];
  engine.reply({ stream: engineStream(reply.engine, answer) });
  if (reply.repair) engine.reply({ stream: engineStream(reply.engine, reply.repair) });
  const requestsBefore = engine.chatBodies().length;
  const countsBefore = await outcomeCounts();
  const response = await postJson(bench.service, '/v1/messages', {
    model: reply.engine,
    max_tokens: 400,
    stream,
    tools: toolsNamed(reply.tools),
    messages: [user('Go on.')],
  });
  const outcome = stream
    ? sseReplyOutcome(await response.text())
    : jsonReplyOutcome(response.status, response.headers, (await response.json()) as Record<string, any>);
  const accessLine = await accessLineOf(response.headers.get('request-id')!);
  const countsAfter = await outcomeCounts();
  const counted = Object.fromEntries(
    Object.entries(countsAfter)
      .map(([name, value]) => [name, value - (countsBefore[name] ?? 0)] as const)
      .filter(([, value]) => value > 0),
  );
  return { outcome, counted, accessLine, requests: engine.chatBodies().slice(requestsBefore) };
}

/** The access line of a request, once written (a stream's as it ends). */
async function accessLineOf(requestId: string): Promise<Record<string, unknown>> {
  for (let waited = 0; waited < 5_000; waited += 10) {
    const line = accessLines.get(requestId);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no access line for ${requestId}`);
}

for (const reply of REPLIES) {
  describe(`${reply.name} (${reply.engine}): ${reply.source}`, () => {
    for (const stream of [false, true]) {
      test(stream ? 'streamed' : 'folded', async () => {
        const { outcome, counted, accessLine, requests } = await replay(reply, reply, stream);
        assert.deepEqual(outcome, expectedOutcome(reply));
        assert.deepEqual(counted, reply.expected.outcomes);
        const noCalls = Object.keys(reply.expected.outcomes).length === 0;
        assert.deepEqual(
          accessLine.toolCalls,
          noCalls ? undefined : reply.expected.outcomes,
          'the access line counts them',
        );
        assert.equal(requests.length, reply.repair ? 2 : 1, 'one repair request where the input failed, none else');
        if (reply.repair)
          assert.ok(
            requests[1]![REPAIR_FIELD[reply.engine]],
            `the repair holds the engine by ${REPAIR_FIELD[reply.engine]}`,
          );
      });
    }

    test('streamed in pieces of 1, 2, 3, 5 and 7 characters', async () => {
      for (const size of [1, 2, 3, 5, 7]) {
        const { outcome } = await replay(reply, rechunked(reply, size), true);
        assert.deepEqual(outcome, expectedOutcome(reply), `pieces of ${size}`);
      }
    });
  });
}

test('every case of the fixture format is covered', () => {
  const failures = new Set(REPLIES.map((reply) => reply.failure));
  for (const failure of [
    'leaked',
    'empty',
    'unparseable',
    'truncated',
    'missing-required',
    'run-together',
    'odd-chunking',
    'not-a-call',
  ])
    assert.ok(failures.has(failure as ToolCallReply['failure']), failure);
  const syntaxes = new Set(REPLIES.map((reply) => reply.syntax));
  for (const syntax of ['hermes', 'qwen3-coder', 'llama-json', 'mistral', 'harmony'])
    assert.ok(syntaxes.has(syntax), syntax);
});

// Calls recovered from the text or split from a run-together input count as calls of the step:
// the turn loop ends it after the first (agent/step-reader.ts).
describe('disable_parallel_tool_use', () => {
  for (const name of ['leaked-hermes-parallel', 'run-together']) {
    test(`${name}: the first call only`, async () => {
      const reply = REPLIES.find((candidate) => candidate.name === name)!;
      bench.engines[reply.engine].reply({ stream: engineStream(reply.engine, reply) });
      const response = await postJson(bench.service, '/v1/messages', {
        model: reply.engine,
        max_tokens: 400,
        tools: toolsNamed(reply.tools),
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        messages: [user('Go on.')],
      });
      const outcome = jsonReplyOutcome(
        response.status,
        response.headers,
        (await response.json()) as Record<string, any>,
      );
      assert.deepEqual(outcome.calls, reply.expected.calls.slice(0, 1));
      assert.equal(outcome.stopReason, 'tool_use');
    });
  }
});

describe('textCallSyntaxes: the syntaxes a backend reads calls in', () => {
  async function answer(model: string, name: string) {
    const reply = REPLIES.find((candidate) => candidate.name === name)!;
    bench.engines.vllm.reply({ stream: engineStream('vllm', reply) });
    const response = await postJson(bench.service, '/v1/messages', {
      model,
      max_tokens: 400,
      tools: toolsNamed(reply.tools),
      messages: [user('Go on.')],
    });
    return {
      reply,
      outcome: jsonReplyOutcome(response.status, response.headers, (await response.json()) as Record<string, any>),
    };
  }

  test('named alone, its calls are read and the other syntaxes stay text', async () => {
    const hermes = await answer('vllm-hermes-only', 'leaked-hermes');
    assert.deepEqual(hermes.outcome, expectedOutcome(hermes.reply));
    const mistral = await answer('vllm-hermes-only', 'leaked-mistral');
    const text = mistral.reply.deltas.map((delta) => delta.content ?? '').join('');
    assert.deepEqual(mistral.outcome, { calls: [], text, stopReason: 'end_turn' });
  });

  test('[] reads none', async () => {
    const { reply, outcome } = await answer('vllm-no-text-calls', 'leaked-hermes');
    const text = reply.deltas.map((delta) => delta.content ?? '').join('');
    assert.deepEqual(outcome, { calls: [], text, stopReason: 'end_turn' });
  });
});
