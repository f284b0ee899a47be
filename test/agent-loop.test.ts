/**
 * The agent loop over HTTP, on the scripted backend and pages served on loopback: the step
 * bound answers `pause_turn`, sending the paused turn back resumes it, server tool blocks stream
 * as they happen (and the official client folds them), and a real prefill is still refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { postJson, readSse, scriptedModels, startService, type RunningService } from '@model-messages/testing';
import { tokenize } from '../packages/server/src/backends/scripted/tokenizer.js';

interface Block {
  type: string;
  id?: string;
  tool_use_id?: string;
  name?: string;
  input?: Record<string, unknown>;
  text?: string;
  content?: { type: string; url?: string; error_code?: string };
}

interface Reply {
  content: Block[];
  stop_reason: string;
  usage: { output_tokens: number; server_tool_use: { web_search_requests: number; web_fetch_requests: number } | null };
}

let pages: Server;
let origin: string;
let service: RunningService;
/** Every path the page server was asked for. */
const served: string[] = [];

function servePages(): Promise<Server> {
  const server = createServer((request, response) => {
    served.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'text/plain' }).end(`page ${request.url}`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Three fetches, one a step, then the answer: four steps, so a bound of two pauses twice. */
function writeScript(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'mms-loop-')), 'script.json');
  const fetchCall = (page: string) => ({
    type: 'server_tool_use',
    name: 'web_fetch',
    input: { url: `${origin}/${page}` },
  });
  const script = [
    {
      when: '^read pages',
      steps: [
        [fetchCall('one')],
        [{ type: 'text', text: 'Reading on.' }, fetchCall('two')],
        [fetchCall('three')],
        [{ type: 'text', text: 'All three read.' }],
      ],
    },
    {
      when: '^cut ',
      steps: [[{ type: 'text', text: CUT_TEXT }, fetchCall('cut-target')], [{ type: 'text', text: 'Done.' }]],
    },
    {
      when: '^finished then cut ',
      steps: [
        [
          fetchCall('finished-target'),
          { type: 'text', text: 'A long answer that the output budget will end somewhere in the middle of.' },
        ],
      ],
    },
    // A URL the user never gave, a URL that is none, then three the user gave.
    {
      when: '^refused then fetched ',
      steps: [
        [
          fetchCall('never-given'),
          { type: 'server_tool_use', name: 'web_fetch', input: { url: 'not a url' } },
          fetchCall('given-1'),
          fetchCall('given-2'),
          fetchCall('given-3'),
        ],
        [{ type: 'text', text: 'Done.' }],
      ],
    },
  ];
  writeFileSync(path, JSON.stringify(script));
  return path;
}

const CUT_TEXT = 'Let me read it.';

/**
 * A max_tokens that ends the step inside the fetch call's input just before its closing `"}`:
 * what arrived, `{"url":"<origin>/cut-target`, parses to a URL the user did mention.
 */
function budgetEndingInsideTheCall(): number {
  return tokenize(CUT_TEXT).length + tokenize(JSON.stringify({ url: `${origin}/cut-target` })).length - 2;
}

const FETCH_TOOL = { type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'], max_uses: 5 };

function userTurn(): { role: 'user'; content: string } {
  return { role: 'user', content: `read pages ${origin}/one ${origin}/two ${origin}/three` };
}

before(async () => {
  pages = await servePages();
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  service = await startService({
    models: scriptedModels({ script: writeScript() }),
    maxSteps: 2,
    serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'] } },
  });
});

after(async () => {
  await service.close();
  pages.closeAllConnections();
  pages.close();
});

async function create(messages: unknown[], extra: Record<string, unknown> = {}): Promise<Reply> {
  const response = await postJson(service, '/v1/messages', {
    model: 'mid',
    max_tokens: 300,
    messages,
    tools: [FETCH_TOOL],
    ...extra,
  });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as Reply;
}

describe('pause_turn and resume', () => {
  test('the step bound answers pause_turn with every server call answered', async () => {
    const reply = await create([userTurn()]);
    assert.equal(reply.stop_reason, 'pause_turn');
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'web_fetch_tool_result', 'text', 'server_tool_use', 'web_fetch_tool_result'],
    );
    assert.equal(reply.content[1]?.tool_use_id, reply.content[0]?.id);
    assert.equal(reply.content[4]?.content?.url, `${origin}/two`);
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 2 });
  });

  test('sending the paused turn back resumes it, until the turn ends', async () => {
    const first = await create([userTurn()]);
    const second = await create([userTurn(), { role: 'assistant', content: first.content }]);
    assert.equal(second.stop_reason, 'end_turn');
    assert.deepEqual(
      second.content.map((block) => block.type),
      ['server_tool_use', 'web_fetch_tool_result', 'text'],
    );
    assert.equal(second.content[1]?.content?.url, `${origin}/three`);
    assert.equal(second.content[2]?.text, 'All three read.');
    // The resumed request's own calls only: usage is per request.
    assert.deepEqual(second.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 1 });
  });

  test('a web_fetch with max_uses and max_content_tokens null fetches as if they were unset', async () => {
    // The official client types both as nullable. Read as numbers, null would be 0: every fetch past max_uses and no text kept.
    const reply = await create([userTurn()], { tools: [{ ...FETCH_TOOL, max_uses: null, max_content_tokens: null }] });
    assert.equal(reply.stop_reason, 'pause_turn');
    const results = reply.content.filter((block) => block.type === 'web_fetch_tool_result');
    assert.deepEqual(
      results.map((block) => [block.content?.type, block.content?.url]),
      [
        ['web_fetch_result', `${origin}/one`],
        ['web_fetch_result', `${origin}/two`],
      ],
    );
    assert.match(JSON.stringify(results[0]?.content), /page \/one/);
  });

  test('a paused turn missing a result block is refused, naming the call', async () => {
    const first = await create([userTurn()]);
    const unanswered = first.content.filter((_, index) => index !== 1);
    const response = await postJson(service, '/v1/messages', {
      model: 'mid',
      max_tokens: 300,
      messages: [userTurn(), { role: 'assistant', content: unanswered }],
      tools: [FETCH_TOOL],
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { message: string } };
    assert.match(body.error.message, new RegExp(String(first.content[0]?.id)));
  });

  test('a final assistant turn of text is still a prefill, refused with tools (rule 4)', async () => {
    const response = await postJson(service, '/v1/messages', {
      model: 'mid',
      max_tokens: 300,
      messages: [userTurn(), { role: 'assistant', content: [{ type: 'text', text: 'Sure,' }] }],
      tools: [FETCH_TOOL],
    });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { error: { message: string } }).error.message, /Rule 4/);
  });
});

describe('max_uses counts the calls that made a request', () => {
  test('calls refused before any request (a URL not given, a malformed one) leave max_uses to the fetches that follow', async () => {
    const before = served.length;
    const reply = await create(
      [{ role: 'user', content: `refused then fetched ${origin}/given-1 ${origin}/given-2 ${origin}/given-3` }],
      { tools: [{ ...FETCH_TOOL, max_uses: 2 }] },
    );
    const outcomes = reply.content
      .filter((block) => block.type === 'web_fetch_tool_result')
      .map((block) => block.content?.error_code ?? block.content?.url);
    assert.deepEqual(outcomes, [
      'url_not_in_prior_context',
      'invalid_tool_input',
      `${origin}/given-1`,
      `${origin}/given-2`,
      'max_uses_exceeded',
    ]);
    assert.deepEqual(served.slice(before), ['/given-1', '/given-2']);
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 2 });
  });
});

describe('a step cut by max_tokens inside a server call', () => {
  const cutTurn = () => ({ role: 'user' as const, content: `cut ${origin}/cut-target` });

  test('the cut call is answered with invalid_tool_input without running, and stop_reason stays max_tokens', async () => {
    const reply = await create([cutTurn()], { max_tokens: budgetEndingInsideTheCall() });
    assert.equal(reply.stop_reason, 'max_tokens');
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['text', 'server_tool_use', 'web_fetch_tool_result'],
    );
    assert.deepEqual(
      reply.content[1]?.input,
      { url: `${origin}/cut-target` },
      'the part that arrived reads as a whole URL',
    );
    assert.equal(reply.content[2]?.tool_use_id, reply.content[1]?.id);
    assert.deepEqual(reply.content[2]?.content, {
      type: 'web_fetch_tool_result_error',
      error_code: 'invalid_tool_input',
    });
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 0 });
    assert.deepEqual(
      served.filter((path) => path === '/cut-target'),
      [],
    );
  });

  test('streamed, the same blocks arrive as events, and the turn ends on max_tokens', async () => {
    const response = await postJson(service, '/v1/messages', {
      model: 'mid',
      max_tokens: budgetEndingInsideTheCall(),
      messages: [cutTurn()],
      tools: [FETCH_TOOL],
      stream: true,
    });
    const events = await readSse(response);
    const starts = events
      .filter((event) => event.event === 'content_block_start')
      .map((event) => event.data.content_block as Block);
    assert.deepEqual(
      starts.map((block) => block.type),
      ['text', 'server_tool_use', 'web_fetch_tool_result'],
    );
    assert.deepEqual(starts[2]?.content, { type: 'web_fetch_tool_result_error', error_code: 'invalid_tool_input' });
    const delta = events.find((event) => event.event === 'message_delta')?.data as unknown as {
      delta: { stop_reason: string };
    };
    assert.equal(delta.delta.stop_reason, 'max_tokens');
    assert.equal(events.at(-1)?.event, 'message_stop');
  });

  test('the cut turn can be sent back, with a new user turn or as a turn to resume', async () => {
    const reply = await create([cutTurn()], { max_tokens: budgetEndingInsideTheCall() });
    const followed = await create([
      cutTurn(),
      { role: 'assistant', content: reply.content },
      { role: 'user', content: 'Go on.' },
    ]);
    assert.equal(followed.stop_reason, 'end_turn');
    const resumed = await create([cutTurn(), { role: 'assistant', content: reply.content }]);
    assert.equal(resumed.content.at(-1)?.text, 'Done.');
  });

  test('a call the model finished before the budget ran out is run', async () => {
    const reply = await create([{ role: 'user', content: `finished then cut ${origin}/finished-target` }], {
      max_tokens: 30,
    });
    assert.equal(reply.stop_reason, 'max_tokens');
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'text', 'web_fetch_tool_result'],
    );
    assert.equal(reply.content[2]?.content?.url, `${origin}/finished-target`);
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 1 });
  });
});

describe('server tool blocks in the stream', () => {
  test('they stream as they happen, and the JSON reply is their fold', async () => {
    const response = await postJson(service, '/v1/messages', {
      model: 'mid',
      max_tokens: 300,
      messages: [userTurn()],
      tools: [FETCH_TOOL],
      stream: true,
    });
    assert.equal(response.status, 200);
    const events = await readSse(response);
    const starts = events
      .filter((event) => event.event === 'content_block_start')
      .map((event) => (event.data.content_block as Block).type);
    assert.deepEqual(starts, [
      'server_tool_use',
      'web_fetch_tool_result',
      'text',
      'server_tool_use',
      'web_fetch_tool_result',
    ]);
    const callStart = events.find(
      (event) =>
        event.event === 'content_block_start' && (event.data.content_block as Block).type === 'server_tool_use',
    );
    const callIndex = callStart?.data.index;
    const inputJson = events
      .filter((event) => event.event === 'content_block_delta' && event.data.index === callIndex)
      .map((event) => (event.data.delta as { type: string; partial_json: string }).partial_json)
      .join('');
    assert.deepEqual(JSON.parse(inputJson), { url: `${origin}/one` });
    const resultStart = events.find(
      (event) =>
        event.event === 'content_block_start' && (event.data.content_block as Block).type === 'web_fetch_tool_result',
    );
    assert.equal((resultStart?.data.content_block as Block).content?.type, 'web_fetch_result');
    const delta = events.find((event) => event.event === 'message_delta')?.data as unknown as {
      delta: { stop_reason: string };
      usage: Reply['usage'];
    };
    assert.equal(delta.delta.stop_reason, 'pause_turn');
    assert.deepEqual(delta.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 2 });
    assert.equal(events.at(-1)?.event, 'message_stop');
  });

  test('the official client folds a streamed turn with server tools into the same message', async () => {
    const client = new Anthropic({ baseURL: service.baseURL, apiKey: service.apiKey, maxRetries: 0 });
    const request = {
      model: 'mid',
      max_tokens: 300,
      messages: [userTurn()],
      tools: [FETCH_TOOL],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming;
    const streamed = await client.messages.stream(request).finalMessage();
    const plain = await client.messages.create(request);
    assert.equal(streamed.stop_reason, 'pause_turn');
    const shape = (message: Anthropic.Message) =>
      message.content.map((block) => ({ type: block.type, input: 'input' in block ? block.input : undefined }));
    assert.deepEqual(shape(streamed), shape(plain));
    assert.deepEqual((streamed.content[0] as { input: unknown }).input, { url: `${origin}/one` });
  });
});
