/**
 * Research calls against the real service: a scripted large model drives the service's own
 * agent loop, whose server tools are a fake search engine here (the service's web search is
 * another issue's), so that results carry URLs to cite.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_API_KEY } from '@model-messages/testing';
import { ClientConfigError, PreSendError } from '@model-messages/client';
import { CONTEXT_WINDOW, clientTestModels, clientFor, MAX_OUTPUT, recorder, scriptFolder } from './client-support.js';
import { startResearchService, type ResearchService } from './research-service-support.js';

const search = (query: string) => ({ type: 'server_tool_use', name: 'web_search', input: { query } });
/** Pass 2's tool input is the envelope that admits `Insufficient data` (decision 0010). */
const answer = (value: unknown) => ({ type: 'tool_use', name: 'record_answer', input: { answer: value } });
const script = [
  // With maxSteps 2 the service pauses after the fetch; the resumed turn runs step 2.
  {
    when: '^\\{\\s*"question": "Who founded Acme',
    steps: [
      [search('Acme founder')],
      [{ type: 'server_tool_use', name: 'web_fetch', input: { url: 'https://records.example/acme' } }],
      [{ type: 'text', text: 'Acme was founded by Jane Roe [1] in 1901 [3].' }],
    ],
  },
  { when: '^<context>[\\s\\S]*Who founded Acme', steps: [[answer({ founder: 'Jane Roe', year: 1901 })]] },
  { when: '^\\{\\s*"question": "What colour is nothing', steps: [[{ type: 'text', text: 'Insufficient data' }]] },
  {
    when: '^\\{\\s*"question": "Who founded Gamma',
    steps: [
      [search('Gamma')],
      [{ type: 'text', text: 'Insufficient data on the date, but Gamma was founded by Jane Roe [1].' }],
    ],
  },
  { when: '^<context>[\\s\\S]*Who founded Gamma', steps: [[answer('Insufficient data')]] },
  {
    when: '^\\{\\s*"question": "Who founded Slowco',
    steps: [[search('Slowco')], [{ type: 'text', text: 'Slowco was founded by Jane Roe [1].' }]],
  },
  // Pass 2 on the slow model: some 300 tokens at 50 ms each, far past the call's deadline.
  {
    when: '^<context>[\\s\\S]*Who founded Slowco',
    steps: [[answer({ founder: 'Jane Roe '.repeat(150).trim(), year: 1900 })]],
  },
  {
    when: '^\\{\\s*"question": "Who runs Beta',
    steps: [[search('Beta')], [{ type: 'text', text: 'Beta is run by Bo Li [2] since 2000 [9].' }]],
  },
  {
    when: '^<context>[\\s\\S]*Who runs Beta',
    steps: [[answer({ founder: '', year: 0 })], [answer({ founder: 'Bo Li', year: 2000 })]],
  },
];

const sse = (events: Array<Record<string, unknown>>) =>
  events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('');

let service: ResearchService;
let baseURL: string;
before(async () => {
  const folder = scriptFolder({ 'script.json': script });
  const slow = {
    id: 'mid-slow',
    tier: 'mid' as const,
    generation: 'newer' as const,
    contextWindow: CONTEXT_WINDOW,
    maxOutputTokens: MAX_OUTPUT,
    backend: { type: 'scripted' as const, script: 'script.json', tokenDelayMs: 50 },
  };
  service = await startResearchService(
    { models: clientTestModels({ script: 'script.json' }, [slow]), maxSteps: 2 },
    folder,
  );
  baseURL = service.baseURL;
});
after(() => service.close());

const schema = {
  type: 'object',
  properties: { founder: { type: 'string' }, year: { type: 'integer' } },
  required: ['founder', 'year'],
  additionalProperties: false,
};
type Founding = { founder: string; year: number };

describe('research', () => {
  test('pass 1 on the large tier with server tools, continued after pause_turn; pass 2 shapes the prose; citations map to sources', async () => {
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({
      question: 'Who founded Acme?',
      context: { company: 'Acme' },
      schema,
      webFetch: true,
    });
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.value.data, { founder: 'Jane Roe', year: 1901 });
    assert.equal(result.value.prose, 'Acme was founded by Jane Roe [1] in 1901 [3].');
    assert.deepEqual(
      result.value.citations.map((citation) => [citation.marker, citation.source?.url]),
      [
        [1, 'https://acme.example/history'],
        [3, 'https://records.example/acme'],
      ],
    );
    assert.deepEqual(
      result.value.sources.map((source) => source.title),
      ['Acme history', 'Acme people', 'Acme records'],
    );
    assert.deepEqual(result.value.unresolvedCitations, []);
    assert.equal(result.requestIds.length, 3);
    assert.equal(result.usage.webSearchRequests, 1);

    const [passOne, continuation, passTwo] = record.bodies;
    assert.equal(passOne?.model, 'large-newer');
    assert.deepEqual(passOne?.thinking, { type: 'adaptive' });
    assert.equal(passOne?.tool_choice, undefined);
    const tools = passOne?.tools as Array<Record<string, unknown>>;
    assert.deepEqual(tools.slice(0, 2), [
      { type: 'web_search_20260209', name: 'web_search', max_uses: 5, allowed_callers: ['direct'] },
      { type: 'code_execution_20260521', name: 'code_execution' },
    ]);
    assert.deepEqual(
      { ...tools[2], max_content_tokens: undefined },
      {
        type: 'web_fetch_20260209',
        name: 'web_fetch',
        max_uses: 5,
        max_content_tokens: undefined,
        allowed_callers: ['direct'],
      },
    );
    const fetchTokens = tools[2]?.max_content_tokens as number;
    assert.ok(
      Number.isInteger(fetchTokens) && fetchTokens > 30_000 && fetchTokens <= (200_000 - 4_096 - 5_000) / 5,
      String(fetchTokens),
    );
    assert.match(String(passOne?.system), /Insufficient data[\s\S]*\[n\]|\[n\][\s\S]*Insufficient data/);
    assert.deepEqual(JSON.parse(String(passOne?.messages[0]?.content)), {
      question: 'Who founded Acme?',
      context: { company: 'Acme' },
    });

    // The paused turn goes back as the final assistant message: a resume (decision 0006).
    assert.deepEqual(
      continuation?.messages.map((message) => message.role),
      ['user', 'assistant'],
    );
    const paused = continuation?.messages[1]?.content as Array<{ type: string }>;
    assert.deepEqual(
      paused.map((block) => block.type),
      ['server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_fetch_tool_result'],
    );
    assert.deepEqual(
      { ...continuation, messages: undefined, tools: undefined },
      { ...passOne, messages: undefined, tools: undefined },
      'the same request otherwise',
    );
    // max_uses counts per request on the service: the continuation offers what the turn has left,
    // and the fetch share is the headroom after the resumed prompt over the 4 fetches left.
    const continued = continuation?.tools as Array<Record<string, unknown>>;
    assert.deepEqual(
      continued.map((tool) => [tool.name, tool.max_uses]),
      [
        ['web_search', 4],
        ['code_execution', undefined],
        ['web_fetch', 4],
      ],
    );
    const share = continued[2]?.max_content_tokens as number;
    assert.ok(share > fetchTokens && share * 4 < fetchTokens * 5, `${share} vs ${fetchTokens}`);

    assert.equal(passTwo?.model, 'mid-newer');
    assert.equal(passTwo?.max_tokens, MAX_OUTPUT, "pass 2's default budget: the tier's within the model's limit");
    assert.deepEqual(passTwo?.tool_choice, { type: 'tool', name: 'record_answer', disable_parallel_tool_use: true });
    assert.equal(passTwo?.tools && (passTwo.tools as unknown[]).length, 1);
    assert.match(
      String(passTwo?.messages[0]?.content),
      /"url": "https:\/\/records\.example\/acme"[\s\S]*<input>\nAcme was founded by Jane Roe \[1\] in 1901 \[3\]\.\n<\/input>/,
    );
  });

  test('uses spent before a pause are not granted again: a tool with none left is not offered to the continuation', async () => {
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({
      question: 'Who founded Acme?',
      schema,
      webSearchMaxUses: 1,
      webFetch: { maxUses: 1 },
    });
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(
      (record.bodies[1]?.tools as Array<{ name: string }>).map((tool) => tool.name),
      ['code_execution'],
    );
  });

  test('more pauses than maxContinuations: a paused failure, not truncated, with the sources, usage and request ids so far', async () => {
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({
      question: 'Who founded Acme?',
      schema,
      webFetch: true,
      maxContinuations: 0,
      fallback: undefined,
    });
    assert.ok(!result.ok && result.kind === 'paused', JSON.stringify(result));
    assert.equal(result.reason, 'continuation-limit');
    assert.equal(result.continuations, 0);
    assert.match(result.message, /maxContinuations is 0/);
    assert.deepEqual(
      result.research?.sources.map((source) => source.url),
      ['https://acme.example/history', 'https://acme.example/people', 'https://records.example/acme'],
    );
    assert.equal(result.requestIds.length, 1);
    assert.equal(result.usage.webSearchRequests, 1);
    assert.equal(record.bodies.length, 1);
  });

  test('Insufficient data is its own outcome: no pass 2, no fallback', async () => {
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({
      question: 'What colour is nothing?',
      schema,
      fallback: () => ({ founder: 'x', year: 1 }),
    });
    assert.ok(!result.ok && result.kind === 'insufficient_data', JSON.stringify(result));
    assert.equal(result.research?.prose, 'Insufficient data');
    assert.equal(result.researchPass, 1);
    assert.equal(record.bodies.length, 1);
  });

  test('prose that only starts with Insufficient data goes to pass 2; Insufficient data from pass 2 is its own outcome, research kept, no fallback', async () => {
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({
      question: 'Who founded Gamma?',
      schema,
      fallback: () => ({ founder: 'x', year: 1 }),
    });
    assert.ok(!result.ok && result.kind === 'insufficient_data', JSON.stringify(result));
    assert.deepEqual(
      record.bodies.map((body) => body.model),
      ['large-newer', 'mid-newer'],
    );
    assert.equal(result.research?.prose, 'Insufficient data on the date, but Gamma was founded by Jane Roe [1].');
    assert.equal(result.researchPass, 2, 'the same kind as pass 1 can end in, from pass 2');
    assert.equal(result.research?.citations[0]?.source?.url, 'https://acme.example/history');
    assert.equal(result.requestIds.length, 2);
    assert.equal(client.declineCounts().total, 0);
  });

  test('a rejected answer re-runs pass 2 only, keeping the research; unresolved citations are reported', async () => {
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({
      question: 'Who runs Beta?',
      schema,
      guardrails: [(value) => (value.year < 1800 ? `year ${value.year} is not plausible` : undefined)],
    });
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.value.data, { founder: 'Bo Li', year: 2000 });
    assert.deepEqual(
      record.bodies.map((body) => body.model),
      ['large-newer', 'mid-newer', 'mid-newer'],
    );
    assert.deepEqual(result.value.unresolvedCitations, [9]);
  });

  test('a truncated pass 1 is retried once with max_tokens doubled', async () => {
    const record = recorder(['truncate']);
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({
      question: 'Who runs Beta?',
      schema,
      maxTokens: 100,
      guardrails: [],
    });
    assert.deepEqual(
      record.bodies.slice(0, 2).map((body) => [body.model, body.max_tokens]),
      [
        ['large-newer', 100],
        ['large-newer', 200],
      ],
    );
    assert.ok(result.ok, JSON.stringify(result));
  });

  test('the truncation retry recomputes the web fetch share for its larger max_tokens: prompt + fetches + output + buffer stay within the window', async () => {
    const record = recorder(['truncate']);
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({
      question: 'Who runs Beta?',
      schema,
      maxTokens: 2_000,
      webFetch: true,
    });
    assert.ok(result.ok, JSON.stringify(result));
    const [first, retry] = record.bodies;
    assert.deepEqual([first?.max_tokens, retry?.max_tokens], [2_000, 4_000]);
    const share = (body: typeof first) =>
      (body?.tools as Array<{ name: string; max_content_tokens?: number }>).find((tool) => tool.name === 'web_fetch')
        ?.max_content_tokens ?? 0;
    const promptTokens = Math.ceil(
      (String(retry?.system).length +
        String(retry?.messages[0]?.content).length +
        JSON.stringify(retry?.tools).length) /
        4,
    );
    assert.equal(share(retry), Math.floor((CONTEXT_WINDOW - promptTokens - 4_000 - 5_000) / 5));
    assert.ok(share(retry) < share(first), `${share(retry)} vs ${share(first)}`);
    assert.ok(promptTokens + 5 * share(retry) + 4_000 + 5_000 <= CONTEXT_WINDOW);
  });

  test("at the default budget, which is the model's limit, a truncated pass 1 cannot grow and the failure says so", async () => {
    const record = recorder(['truncate']);
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({ question: 'Who runs Beta?', schema });
    assert.ok(!result.ok && result.kind === 'truncated', JSON.stringify(result));
    assert.equal(result.maxTokens, MAX_OUTPUT);
    assert.match(result.message, /not retried: max_tokens 4096 is already the model's limit \(4096\)$/);
    assert.equal(record.bodies.length, 1);
  });

  test('a failed pass 2 keeps the research in the failure', async () => {
    const record = recorder((index) => (index >= 1 ? 'no-tool-call' : undefined));
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({ question: 'Who runs Beta?', schema });
    assert.ok(!result.ok && result.kind === 'declined', JSON.stringify(result));
    assert.equal(result.research?.prose, 'Beta is run by Bo Li [2] since 2000 [9].');
    assert.equal(result.research?.citations[0]?.source?.url, 'https://acme.example/people');
  });

  test('a pause that cannot be resumed (the turn does not end on a server tool result) is a paused failure, not a thrown Rule 4', async () => {
    const pausedOnText = sse([
      {
        type: 'message_start',
        message: {
          id: 'msg_p',
          type: 'message',
          role: 'assistant',
          model: 'large-newer',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 40, output_tokens: 1 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Acme was founded by' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'pause_turn', stop_sequence: null },
        usage: { input_tokens: 40, output_tokens: 7 },
      },
      { type: 'message_stop' },
    ]);
    let sent = 0;
    const client = clientFor(baseURL, TEST_API_KEY, {
      fetch: async () => (
        sent++,
        new Response(pausedOnText, { headers: { 'content-type': 'text/event-stream', 'request-id': 'req_paused' } })
      ),
    });
    const result = await client.research<Founding>({ question: 'Who founded Acme?', schema });
    assert.ok(!result.ok && result.kind === 'paused', JSON.stringify(result));
    assert.equal(result.reason, 'unresumable');
    assert.match(result.message, /ends on a text block, not a server tool result/);
    assert.equal(result.research?.prose, 'Acme was founded by');
    assert.deepEqual(result.requestIds, ['req_paused']);
    assert.equal(result.usage.outputTokens, 7);
    assert.equal(sent, 1);
  });

  test('a continuation whose paused turn does not fit the prompt budget is not sent: a paused failure saying so (decision 0009)', async () => {
    const page = 'Jane Roe founded Acme in 1901. '.repeat(1_700);
    const fetched = {
      type: 'web_fetch_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: {
        type: 'web_fetch_result',
        url: 'https://records.example/acme',
        content: {
          type: 'document',
          source: { type: 'text', media_type: 'text/plain', data: page },
          title: 'Acme records',
        },
        retrieved_at: '2026-01-01T00:00:00Z',
      },
    };
    const pausedOnFetch = sse([
      {
        type: 'message_start',
        message: {
          id: 'msg_p',
          type: 'message',
          role: 'assistant',
          model: 'large-newer',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 40, output_tokens: 1 },
        },
      },
      {
        type: 'content_block_start',
        index: 0,
        content_block: {
          type: 'server_tool_use',
          id: 'srvtoolu_1',
          name: 'web_fetch',
          input: { url: 'https://records.example/acme' },
        },
      },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: fetched },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'pause_turn', stop_sequence: null },
        usage: { input_tokens: 40, output_tokens: 7 },
      },
      { type: 'message_stop' },
    ]);
    let sent = 0;
    const client = clientFor(baseURL, TEST_API_KEY, {
      fetch: async () => (
        sent++,
        new Response(pausedOnFetch, { headers: { 'content-type': 'text/event-stream', 'request-id': 'req_paused' } })
      ),
    });
    // (20,000 window - 4,000 max_tokens - 5,000 buffer) x 4 = 44,000 characters: pass 1 fits, the fetched page (about 52,700) does not.
    const model = { id: 'large-newer', tier: 'large' as const, contextWindow: 20_000, maxOutputTokens: 4_000 };
    const result = await client.research<Founding>({
      question: 'Who founded Acme?',
      schema,
      model,
      maxTokens: 4_000,
      webFetch: true,
    });
    assert.ok(!result.ok && result.kind === 'paused', JSON.stringify(result).slice(0, 500));
    assert.equal(result.reason, 'unresumable');
    assert.match(
      result.message,
      /the continuation was not sent \(prompt_too_long\): the prompt has \d+ characters; large-newer allows 44000/,
    );
    assert.equal(result.research?.sources[0]?.url, 'https://records.example/acme');
    assert.equal(sent, 1);
  });

  test('a pass 2 over its prompt budget is not sent: a not_sent failure that keeps the research, usage and request ids', async () => {
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    // (5,800 window - 512 max_tokens - 5,000 buffer) x 4 = 1,152 characters: less than pass 2's system prompt and tool.
    const result = await client.research<Founding>({
      question: 'Who runs Beta?',
      schema,
      shapeModel: { id: 'mid-newer', tier: 'mid', contextWindow: 5_800, maxOutputTokens: 512 },
      shapeMaxTokens: 512,
    });
    assert.ok(!result.ok && result.kind === 'not_sent', JSON.stringify(result));
    assert.equal(result.code, 'prompt_too_long');
    assert.match(result.message, /^research pass 2 was not sent: the prompt has \d+ characters; mid-newer allows 1152/);
    assert.equal(result.research?.prose, 'Beta is run by Bo Li [2] since 2000 [9].');
    assert.equal(result.requestIds.length, 1);
    assert.ok(result.usage.inputTokens > 0);
    assert.equal(record.bodies.length, 1);
  });

  test("pass 2's default output is not shrunk to fit its prompt unless asked: not_sent without shrinkShapeOutputToFit, the cut budget with it", async () => {
    // No maxOutputTokens: the mid tier's 64k default, capped by the 6,500-token window to three
    // quarters of the 1,500 it leaves after the buffer (issue 32): 1,125, leaving 1,500 characters
    // for a prompt that holds pass 1's prose and sources.
    const shapeModel = { id: 'mid-newer', tier: 'mid' as const, contextWindow: 6_500 };
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const refused = await client.research<Founding>({ question: 'Who runs Beta?', schema, shapeModel });
    assert.ok(!refused.ok && refused.kind === 'not_sent', JSON.stringify(refused));
    assert.match(refused.message, /mid-newer allows 1500 = \(6500 window - 1125 max_tokens - 5000 buffer\) x 4/);
    assert.equal(record.bodies.length, 1, 'pass 1 only');

    const shrunk = await client.research<Founding>({
      question: 'Who runs Beta?',
      schema,
      shapeModel,
      shrinkShapeOutputToFit: true,
    });
    assert.ok(shrunk.ok, JSON.stringify(shrunk));
    const passTwo = record.bodies[2]!;
    assert.equal(passTwo.model, 'mid-newer');
    const promptChars =
      String(passTwo.system).length +
      String(passTwo.messages[0]?.content).length +
      JSON.stringify(passTwo.tools).length;
    assert.equal(passTwo.max_tokens, 6_500 - Math.ceil(promptChars / 4) - 5_000);
  });

  test('shrinkShapeOutputToFit with a shapeMaxTokens of your own is a ClientConfigError before pass 1 is sent', async () => {
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    await assert.rejects(
      client.research({ question: 'Who runs Beta?', schema, shapeMaxTokens: 512, shrinkShapeOutputToFit: true }),
      (error: unknown) =>
        error instanceof ClientConfigError &&
        /^shrinkShapeOutputToFit: .*shapeMaxTokens \(512\) was given/.test(error.message),
    );
    assert.equal(record.bodies.length, 0);
  });

  test("the deadline expiring in pass 2 is a timeout that keeps pass 1's research, usage and request ids", async () => {
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    const result = await client.research<Founding>({
      question: 'Who founded Slowco?',
      schema,
      shapeModel: { id: 'mid-slow', tier: 'mid', contextWindow: CONTEXT_WINDOW, maxOutputTokens: MAX_OUTPUT },
      timeoutMs: 2_500,
      fallback: undefined,
    });
    assert.ok(!result.ok && result.kind === 'timeout', JSON.stringify(result));
    assert.equal(result.research?.prose, 'Slowco was founded by Jane Roe [1].');
    assert.deepEqual(
      record.bodies.map((body) => body.model),
      ['large-newer', 'mid-slow'],
    );
    assert.equal(result.requestIds.length, 2);
    assert.equal(result.usage.webSearchRequests, 1);
  });

  test('a pass 2 schema that cannot work is refused before pass 1 is sent', async () => {
    const record = recorder();
    const client = clientFor(baseURL, TEST_API_KEY, { fetch: record.fetch });
    await assert.rejects(
      client.research({ question: 'Who founded Acme?', schema: { type: 'array', items: {} } }),
      PreSendError,
    );
    // 31 levels are within the cap of 32 as given, but pass 2 sends them inside the envelope, two levels deeper.
    const nested = (depth: number): Record<string, unknown> =>
      depth === 1 ? { type: 'object', properties: {} } : { type: 'object', properties: { child: nested(depth - 1) } };
    await assert.rejects(
      client.research({ question: 'Who founded Acme?', schema: nested(31) }),
      (error: unknown) =>
        error instanceof PreSendError &&
        /inside the Insufficient data envelope.*nests deeper than 32 levels/.test(error.message),
    );
    assert.equal(record.bodies.length, 0);
  });
});
