/**
 * The turn loop over a fake backend whose batches are written out part by part: which server
 * calls run after a step cut by max_tokens, what disable_parallel_tool_use keeps of a batch
 * (the token counts after the one call allowed, and the stop reason), and what the step reader
 * signs for every backend (thinking signatures, server call ids).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseMessageRequest,
  type ContentBlock,
  type ModelProfile,
  type ServerToolResultBlock,
  type ServerToolUseBlock,
} from '@model-messages/protocol';
import type { Backend } from '../src/backends/backend.js';
import { Cancellation } from '../src/backends/cancellation.js';
import { runTurn } from '../src/agent/run-turn.js';
import { buildModelPrompt } from '../src/call-builder/build-model-call.js';
import type { ServerToolRunner } from '../src/agent/server-tool-runner.js';
import { serverCallIdVerifies } from '../src/signing/server-call-id.js';
import { Signer } from '../src/signing/signer.js';
import { innerSignature, thinkingSignatureVerifies } from '../src/signing/thinking-signature.js';
import { conversationDigest, resultDigest, turnDigest } from '../src/signing/turn-digest.js';
import type { StreamPart } from '../src/streaming/stream-part.js';

const signer = new Signer(Buffer.alloc(32, 3));

const MODEL: ModelProfile = {
  id: 'fake',
  tier: 'mid',
  generation: 'newer',
  contextWindow: 100_000,
  maxOutputTokens: 4096,
};
const LOOKUP = {
  name: 'lookup',
  description: 'Look it up.',
  input_schema: { type: 'object', properties: { q: { type: 'string' } } },
};
const FETCH = { type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'] };

/** A backend that streams `steps[n]`, batch by batch, for step n. */
function fakeBackend(steps: StreamPart[][][]): Backend {
  return {
    name: 'fake',
    async *stream(step) {
      for (const batch of steps[step.step] ?? []) yield batch;
    },
    countTokens: async () => 0,
    prepare: async () => 'nothing',
    load: async () => {},
    readiness: async () => [{ backend: 'fake', ready: true, state: 'ready' }],
    close: async () => {},
  };
}

/** Every call it is asked to run, answered with a page. */
function recordingTools(): ServerToolRunner & { ran: ServerToolUseBlock[] } {
  const ran: ServerToolUseBlock[] = [];
  return {
    ran,
    run: async (call): Promise<ServerToolResultBlock> => {
      ran.push(call);
      const page = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'page' }, title: null };
      return {
        type: 'web_fetch_tool_result',
        tool_use_id: call.id,
        content: { type: 'web_fetch_result', url: String(call.input.url), content: page, retrieved_at: '' },
      };
    },
  };
}

/** The parts of one block, its input JSON in one delta. */
function block(start: ContentBlock, inputJson?: string): StreamPart[] {
  const delta: StreamPart[] =
    inputJson === undefined
      ? []
      : [{ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: inputJson } }];
  return [{ type: 'block-start', block: start }, ...delta, { type: 'block-stop' }];
}

/** `inputJson` undefined: no input delta at all, as a call cut as it opened, or an engine's call without arguments. */
const toolCall = (id: string, inputJson: string | undefined) =>
  block({ type: 'tool_use', id, name: 'lookup', input: {}, caller: { type: 'direct' } }, inputJson);
const fetchCall = (id: string, inputJson: string | undefined) =>
  block({ type: 'server_tool_use', id, name: 'web_fetch', input: {} }, inputJson);
const finish = (stopReason: 'tool_use' | 'max_tokens' | 'end_turn'): StreamPart => ({
  type: 'finish',
  stopReason,
  stopSequence: null,
});

function runOver(
  steps: StreamPart[][][],
  body: Record<string, unknown>,
  serverTools: ServerToolRunner = recordingTools(),
): Promise<StreamPart[]> {
  return runWith(fakeBackend(steps), body, serverTools);
}

async function runWith(
  backend: Backend,
  body: Record<string, unknown>,
  serverTools: ServerToolRunner = recordingTools(),
): Promise<StreamPart[]> {
  const request = parseMessageRequest({
    model: 'fake',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'go https://a.example/page' }],
    ...body,
  });
  const parts: StreamPart[] = [];
  const turn = runTurn({
    backend,
    request,
    prompt: buildModelPrompt(request, MODEL),
    model: MODEL,
    fault: undefined,
    maxSteps: 4,
    serverTools,
    inputTokens: 10,
    cancellation: new Cancellation(),
    signer,
  });
  for await (const batch of turn) parts.push(...batch);
  return parts;
}

/** The blocks the turn started, with their ids (a server call's, signed, shown as `srvtoolu`). */
function startedBlocks(parts: StreamPart[]): string[] {
  return parts.flatMap((part) =>
    part.type === 'block-start' ? [`${part.block.type}${'id' in part.block ? ` ${idOf(part.block)}` : ''}`] : [],
  );
}

function idOf(block: { type: string; id: string }): string {
  return block.type === 'server_tool_use' ? block.id.slice(0, 'srvtoolu'.length) : block.id;
}

describe('a step that ends on max_tokens after a server call', () => {
  test('a call whose input JSON arrived whole is run, though it is the last block of the step', async () => {
    const tools = recordingTools();
    const parts = await runOver(
      [
        [
          [
            ...fetchCall('srvtoolu_whole', '{"url":"https://a.example/page"}'),
            { type: 'output-tokens', count: 100 },
            finish('max_tokens'),
          ],
        ],
      ],
      { tools: [FETCH] },
      tools,
    );
    assert.deepEqual(
      tools.ran.map((call) => call.input),
      [{ url: 'https://a.example/page' }],
    );
    assert.deepEqual(parts.at(-1), finish('max_tokens'));
  });

  test('a call whose input JSON was cut is answered invalid_tool_input without running', async () => {
    const tools = recordingTools();
    const parts = await runOver(
      [
        [
          [
            ...fetchCall('srvtoolu_cut', '{"url":"https://a.example/pa'),
            { type: 'output-tokens', count: 100 },
            finish('max_tokens'),
          ],
        ],
      ],
      { tools: [FETCH] },
      tools,
    );
    assert.deepEqual(tools.ran, []);
    const result = parts.find((part) => part.type === 'block-start' && part.block.type === 'web_fetch_tool_result');
    assert.deepEqual(result?.type === 'block-start' ? (result.block as ServerToolResultBlock).content : undefined, {
      type: 'web_fetch_tool_result_error',
      error_code: 'invalid_tool_input',
    });
  });

  test('a call cut as it opened, with no input JSON at all, is answered invalid_tool_input without running', async () => {
    const tools = recordingTools();
    const parts = await runOver(
      [[[...fetchCall('srvtoolu_empty', undefined), { type: 'output-tokens', count: 100 }, finish('max_tokens')]]],
      { tools: [FETCH] },
      tools,
    );
    assert.deepEqual(tools.ran, []);
    const result = parts.find((part) => part.type === 'block-start' && part.block.type === 'web_fetch_tool_result');
    assert.deepEqual(result?.type === 'block-start' ? (result.block as ServerToolResultBlock).content : undefined, {
      type: 'web_fetch_tool_result_error',
      error_code: 'invalid_tool_input',
    });
    assert.deepEqual(parts.at(-1), finish('max_tokens'));
  });
});

describe('allowed_callers without "direct"', () => {
  const SEARCH_FOR_CODE = {
    type: 'web_search_20260209',
    name: 'web_search',
    allowed_callers: ['code_execution_20260521'],
  };
  const CODE = { type: 'code_execution_20260521', name: 'code_execution' };
  const searchCall = (id: string) =>
    block({ type: 'server_tool_use', id, name: 'web_search', input: {} }, '{"query":"otters"}');
  const codeCall = (id: string) =>
    block({ type: 'server_tool_use', id, name: 'code_execution', input: {} }, '{"code":"web_search(\'otters\')"}');

  /** Records every call it runs; code execution calls web_search once, as code in the sandbox would. */
  function toolsWithCode(): ServerToolRunner & { ran: string[] } {
    const ran: string[] = [];
    return {
      ran,
      run: async (call, context): Promise<ServerToolResultBlock> => {
        ran.push(`${call.name} ${call.id}`);
        if (call.name === 'web_search') return { type: 'web_search_tool_result', tool_use_id: call.id, content: [] };
        const nested = await context.callServerTool('web_search', { query: 'otters' });
        return {
          type: 'code_execution_tool_result',
          tool_use_id: call.id,
          content: {
            type: 'code_execution_result',
            stdout: JSON.stringify(nested.content),
            stderr: '',
            return_code: 0,
            content: [],
          },
        };
      },
    };
  }

  test("the model's own call is invalid_tool_input and does not run; code's call runs", async () => {
    const tools = toolsWithCode();
    const steps = [
      [
        [
          ...searchCall('srvtoolu_direct'),
          ...codeCall('srvtoolu_code'),
          { type: 'output-tokens', count: 20 } as const,
          finish('tool_use'),
        ],
      ],
      [[finish('end_turn')]],
    ];
    const parts = await runOver(steps, { tools: [SEARCH_FOR_CODE, CODE] }, tools);
    const [direct, code] = parts.flatMap((part) =>
      part.type === 'block-start' && part.block.type === 'server_tool_use' ? [part.block.id] : [],
    );
    const results = parts.flatMap((part) =>
      part.type === 'block-start' && part.block.type.endsWith('_tool_result')
        ? [part.block as ServerToolResultBlock]
        : [],
    );
    assert.deepEqual(results[0], {
      type: 'web_search_tool_result',
      tool_use_id: direct,
      content: { type: 'web_search_tool_result_error', error_code: 'invalid_tool_input' },
    });
    // Tools run before the ids are signed (over their results): code's call is named after the
    // code call's id of that moment.
    const [codeRun, nestedRun] = tools.ran;
    const ranAs = codeRun?.replace('code_execution ', '');
    assert.deepEqual([codeRun, nestedRun], [`code_execution ${ranAs}`, `web_search ${ranAs}_1`]);
    assert.equal(results[1]?.type, 'code_execution_tool_result');
    assert.equal(results[1]?.tool_use_id, code);
  });

  test('with "direct" in the list, or no list, the model calls it', async () => {
    for (const tool of [
      { ...SEARCH_FOR_CODE, allowed_callers: ['direct', 'code_execution_20260521'] },
      { type: 'web_search_20260209', name: 'web_search' },
    ]) {
      const tools = toolsWithCode();
      await runOver(
        [
          [[...searchCall('srvtoolu_direct'), { type: 'output-tokens', count: 10 }, finish('tool_use')]],
          [[finish('end_turn')]],
        ],
        { tools: [tool] },
        tools,
      );
      assert.deepEqual(
        tools.ran.map((call) => call.split(' ')[0]),
        ['web_search'],
      );
    }
  });
});

describe('a turn whose earlier steps spent the whole output budget', () => {
  test('ends on max_tokens after the server call is answered, without asking the backend for a step of 0 tokens', async () => {
    const tools = recordingTools();
    const backend = fakeBackend([
      [
        [
          ...fetchCall('srvtoolu_1', '{"url":"https://a.example/page"}'),
          { type: 'output-tokens', count: 100 },
          finish('tool_use'),
        ],
      ],
      [[finish('end_turn')]],
    ]);
    const budgets: number[] = [];
    const stream = backend.stream.bind(backend);
    backend.stream = (step, signal) => {
      budgets.push(step.outputBudget);
      return stream(step, signal);
    };
    const request = parseMessageRequest({
      model: 'fake',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'go https://a.example/page' }],
      tools: [FETCH],
    });
    const parts: StreamPart[] = [];
    for await (const batch of runTurn({
      backend,
      request,
      prompt: buildModelPrompt(request, MODEL),
      model: MODEL,
      fault: undefined,
      maxSteps: 4,
      serverTools: tools,
      inputTokens: 10,
      cancellation: new Cancellation(),
      signer,
    }))
      parts.push(...batch);
    assert.deepEqual(budgets, [100]);
    assert.equal(tools.ran.length, 1);
    assert.deepEqual(startedBlocks(parts), ['server_tool_use srvtoolu', 'web_fetch_tool_result']);
    assert.deepEqual(parts.at(-1), finish('max_tokens'));
  });
});

describe('disable_parallel_tool_use', () => {
  const body = { tools: [LOOKUP], tool_choice: { type: 'auto', disable_parallel_tool_use: true } };

  test('token counts after the one call allowed are still read from its batch; later blocks are dropped', async () => {
    const batch = [
      ...toolCall('toolu_1', '{"q":"a"}'),
      ...toolCall('toolu_2', '{"q":"b"}'),
      { type: 'input-tokens', count: 77 } as const,
      { type: 'output-tokens', count: 33 } as const,
      finish('tool_use'),
    ];
    const parts = await runOver([[batch]], body);
    assert.deepEqual(startedBlocks(parts), ['tool_use toolu_1']);
    assert.deepEqual(
      parts.filter((part) => part.type === 'input-tokens' || part.type === 'output-tokens'),
      [
        { type: 'input-tokens', count: 77 },
        { type: 'output-tokens', count: 33 },
      ],
    );
    assert.deepEqual(parts.at(-1), finish('tool_use'));
  });

  test('a whole call stays tool_use when only a dropped block after it was cut by max_tokens', async () => {
    const batch = [
      ...toolCall('toolu_1', '{"q":"a"}'),
      ...toolCall('toolu_2', '{"q":'),
      { type: 'output-tokens', count: 100 } as const,
      finish('max_tokens'),
    ];
    const parts = await runOver([[batch]], body);
    assert.deepEqual(startedBlocks(parts), ['tool_use toolu_1']);
    assert.deepEqual(
      parts.filter((part) => part.type === 'output-tokens'),
      [{ type: 'output-tokens', count: 100 }],
    );
    assert.deepEqual(parts.at(-1), finish('tool_use'));
  });

  test('the allowed call cut itself is max_tokens, with its tokens, though the finish comes in a later batch', async () => {
    const parts = await runOver(
      [[toolCall('toolu_1', '{"q":"a'), [{ type: 'output-tokens', count: 100 }, finish('max_tokens')]]],
      body,
    );
    assert.deepEqual(startedBlocks(parts), ['tool_use toolu_1']);
    assert.deepEqual(
      parts.filter((part) => part.type === 'output-tokens'),
      [{ type: 'output-tokens', count: 100 }],
    );
    assert.deepEqual(parts.at(-1), finish('max_tokens'));
  });

  test('the allowed call cut as it opened, with no input JSON at all, is max_tokens', async () => {
    const parts = await runOver(
      [
        [
          [
            { type: 'block-start', block: { type: 'text', text: '', citations: null } },
            { type: 'block-delta', delta: { type: 'text_delta', text: 'ok' } },
            { type: 'block-stop' },
            ...toolCall('toolu_1', undefined),
            { type: 'output-tokens', count: 1 },
            finish('max_tokens'),
          ],
        ],
      ],
      body,
    );
    assert.deepEqual(startedBlocks(parts), ['text', 'tool_use toolu_1']);
    assert.deepEqual(parts.at(-1), finish('max_tokens'));
  });

  test('the allowed call with no input JSON is a whole call without arguments when the step did not end on max_tokens', async () => {
    const inOneBatch = await runOver(
      [[[...toolCall('toolu_1', undefined), { type: 'output-tokens', count: 3 }, finish('tool_use')]]],
      body,
    );
    assert.deepEqual(inOneBatch.at(-1), finish('tool_use'));
    // The finish in a later batch still decides: the call's own batch cannot tell a cut from a call without arguments.
    const finishLater = await runOver(
      [[toolCall('toolu_1', undefined), [{ type: 'output-tokens', count: 3 }, finish('tool_use')]]],
      body,
    );
    assert.deepEqual(finishLater.at(-1), finish('tool_use'));
    // Another block after it, dropped and then cut, shows the engine had finished the call.
    const movedOn = await runOver(
      [
        [
          [
            ...toolCall('toolu_1', undefined),
            ...toolCall('toolu_2', '{"q":'),
            { type: 'output-tokens', count: 100 },
            finish('max_tokens'),
          ],
        ],
      ],
      body,
    );
    assert.deepEqual(startedBlocks(movedOn), ['tool_use toolu_1']);
    assert.deepEqual(movedOn.at(-1), finish('tool_use'));
  });

  test('a token count in a later batch than the allowed call is read before the step ends; blocks after the call are dropped', async () => {
    let batchAfterCountRead = false;
    const backend = fakeBackend([]);
    backend.stream = async function* () {
      yield toolCall('toolu_1', '{"q":"a"}');
      yield [{ type: 'output-tokens', count: 9 }];
      batchAfterCountRead = true;
      yield [...toolCall('toolu_2', '{"q":"b"}'), { type: 'output-tokens', count: 18 }, finish('tool_use')];
    };
    const parts = await runWith(backend, body);
    assert.equal(batchAfterCountRead, false);
    assert.deepEqual(startedBlocks(parts), ['tool_use toolu_1']);
    assert.deepEqual(
      parts.filter((part) => part.type === 'output-tokens'),
      [{ type: 'output-tokens', count: 9 }],
    );
    assert.deepEqual(parts.at(-1), finish('tool_use'));
  });

  test('a block the engine starts after the allowed call ends the step with that batch, counted or not', async () => {
    let laterBatchRead = false;
    const backend = fakeBackend([]);
    backend.stream = async function* () {
      yield toolCall('toolu_1', '{"q":"a"}');
      yield [{ type: 'block-start', block: { type: 'text', text: '', citations: null } }];
      laterBatchRead = true;
      yield [{ type: 'block-stop' }, { type: 'output-tokens', count: 18 }, finish('end_turn')];
    };
    const parts = await runWith(backend, body);
    assert.equal(laterBatchRead, false);
    assert.deepEqual(startedBlocks(parts), ['tool_use toolu_1']);
    assert.deepEqual(parts.at(-1), finish('tool_use'));
  });

  test('a whole call counted in its own batch ends the step with that batch: later batches are not read', async () => {
    let laterBatchRead = false;
    const backend = fakeBackend([]);
    backend.stream = async function* () {
      yield [...toolCall('toolu_1', '{"q":"a"}'), { type: 'output-tokens', count: 9 }];
      laterBatchRead = true;
      yield [...toolCall('toolu_2', '{"q":"b"}'), finish('tool_use')];
    };
    const parts = await runWith(backend, body);
    assert.equal(laterBatchRead, false);
    assert.deepEqual(parts.at(-1), finish('tool_use'));
  });
});

describe('disable_parallel_tool_use with server calls', () => {
  const body = {
    tools: [FETCH, LOOKUP],
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  };

  test('one server call ends the step: the next is dropped and not run, and the turn steps on', async () => {
    const tools = recordingTools();
    const parts = await runOver(
      [
        [
          [
            ...fetchCall('srvtoolu_a', '{"url":"https://a.example/page"}'),
            ...fetchCall('srvtoolu_b', '{"url":"https://a.example/other"}'),
            { type: 'output-tokens', count: 20 },
            finish('tool_use'),
          ],
        ],
        [[...toolCall('toolu_1', '{"q":"a"}'), ...toolCall('toolu_2', '{"q":"b"}'), finish('tool_use')]],
      ],
      body,
      tools,
    );
    assert.deepEqual(
      tools.ran.map((call) => call.input.url),
      ['https://a.example/page'],
    );
    assert.deepEqual(startedBlocks(parts), ['server_tool_use srvtoolu', 'web_fetch_tool_result', 'tool_use toolu_1']);
    assert.deepEqual(parts.at(-1), finish('tool_use'));
  });
});

describe('what the step reader signs, for every backend', () => {
  const thinking = (text: string, engineSignature?: string): StreamPart[] => [
    { type: 'block-start', block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'block-delta', delta: { type: 'thinking_delta', thinking: text } },
    ...(engineSignature === undefined
      ? []
      : [{ type: 'block-delta', delta: { type: 'signature_delta', signature: engineSignature } } as const]),
    { type: 'block-stop' },
  ];
  const signatures = (parts: StreamPart[]) =>
    parts.flatMap((part) =>
      part.type === 'block-delta' && part.delta.type === 'signature_delta' ? [part.delta.signature] : [],
    );

  test('a thinking block gets one signature, just before it stops, that verifies for its text', async () => {
    const parts = await runOver([[[...thinking('Hmm.'), finish('end_turn')]]], {});
    const [signature] = signatures(parts);
    assert.equal(signatures(parts).length, 1);
    assert.equal(parts.at(-2)?.type, 'block-stop');
    assert.equal(parts.at(-3)?.type, 'block-delta');
    assert.ok(thinkingSignatureVerifies(signer, 'Hmm.', signature!));
    assert.equal(thinkingSignatureVerifies(signer, 'Hmm!', signature!), false);
    assert.equal(innerSignature(signature!), '');
  });

  test("an engine's own signature is not passed on: it is kept inside ours, given back by innerSignature", async () => {
    const parts = await runOver([[[...thinking('Hmm.', 'EqUpstreamSignature=='), finish('end_turn')]]], {});
    const [signature] = signatures(parts);
    assert.equal(signatures(parts).length, 1);
    assert.ok(thinkingSignatureVerifies(signer, 'Hmm.', signature!));
    assert.equal(innerSignature(signature!), 'EqUpstreamSignature==');
    const changedInner = signature!.replace('EqUpstream', 'EqOther');
    assert.equal(thinkingSignatureVerifies(signer, 'Hmm.', changedInner), false);
  });

  test('a server call is held until it has run, then passed on with an id signed over what precedes it and its result', async () => {
    const backend = fakeBackend([]);
    const seen: StreamPart[][] = [];
    backend.stream = async function* () {
      const [start, delta, stop] = fetchCall('srvtoolu_engine', '{"url":"https://a.example/page"}');
      yield [{ type: 'block-start', block: { type: 'text', text: '', citations: null } }];
      yield [{ type: 'block-delta', delta: { type: 'text_delta', text: 'Reading.' } }, { type: 'block-stop' }];
      yield [start!, delta!];
      yield [stop!, { type: 'output-tokens', count: 9 }, finish('end_turn')];
    };
    const ask = { role: 'user' as const, content: 'go https://a.example/page' };
    const request = parseMessageRequest({ model: 'fake', max_tokens: 100, messages: [ask], tools: [FETCH] });
    const turn = runTurn({
      backend,
      request,
      prompt: buildModelPrompt(request, MODEL),
      model: MODEL,
      fault: undefined,
      maxSteps: 1,
      serverTools: recordingTools(),
      inputTokens: 10,
      cancellation: new Cancellation(),
      signer,
    });
    for await (const batch of turn) seen.push(batch);
    // Text passes at once; the call's parts wait for its result, then go on together, and the result after them.
    assert.deepEqual(
      seen.map((batch) => batch.map((part) => part.type)),
      [
        ['block-start'],
        ['block-delta', 'block-stop'],
        [],
        ['output-tokens'],
        ['block-start', 'block-delta', 'block-stop'],
        ['block-start', 'block-stop', 'server-tool-usage'],
        ['finish'],
      ],
    );
    const start = seen[4]![0]!;
    assert.ok(start.type === 'block-start' && start.block.type === 'server_tool_use');
    const id = start.block.id;
    assert.match(id, /^srvtoolu_1[A-Za-z0-9_-]{34}$/);
    const resultStart = seen[5]![0]!;
    assert.ok(resultStart.type === 'block-start' && resultStart.block.type === 'web_fetch_tool_result');
    const result = resultStart.block as { type: string; tool_use_id: string; content: unknown };
    assert.equal(result.tool_use_id, id);
    const conversation = conversationDigest([ask]);
    const place = {
      before: turnDigest([{ type: 'text', text: 'Reading.', citations: null }], conversation),
      result: resultDigest(result),
    };
    const call = { name: 'web_fetch', input: { url: 'https://a.example/page' } };
    assert.ok(serverCallIdVerifies(signer, id, call, place));
    const elsewhere = [
      ['moved behind other blocks', { ...place, before: turnDigest([], conversation) }],
      [
        'under another conversation',
        {
          ...place,
          before: turnDigest([{ type: 'text', text: 'Reading.' }], conversationDigest([{ ...ask, content: 'other' }])),
        },
      ],
      [
        'its result rewritten',
        { ...place, result: resultDigest({ ...result, content: { type: 'web_fetch_result', url: 'x' } }) },
      ],
    ] as const;
    for (const [why, other] of elsewhere) assert.equal(serverCallIdVerifies(signer, id, call, other), false, why);
    assert.equal(
      serverCallIdVerifies(signer, id, { ...call, input: { url: 'https://b.example/' } }, place),
      false,
      'another input',
    );
  });
});
