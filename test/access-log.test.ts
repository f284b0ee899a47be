/**
 * The service's log: one access line per request, written when the request ends (a stream
 * when its last event is out, or its client went away), with the fields of docs/deployment.md;
 * and, at every level down to `trace`, never a key nor any text of a request or a reply: a
 * distinctive key, prompt, scripted answer and tool input go through JSON replies, streams,
 * tool calls and failures, and none of them is found in anything the service logged.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, readSse, scriptedModels, startService, type RunningService } from '@model-messages/testing';

const SECRET_KEY = 'SECRET-KEY-d41f8e0c7b';
const PROMPT = 'PROMPT-TEXT-a93c5e';
const ANSWER = 'SCRIPTED-ANSWER-5b2e7f';
const TOOL_INPUT = 'TOOL-INPUT-8c1d0a';
const MISSING_MODEL = 'MODEL-NAME-FROM-CLIENT-6e4b';
const SECRETS = [SECRET_KEY, PROMPT, ANSWER, TOOL_INPUT, MISSING_MODEL];

/** Each line the service logged, as written and parsed. */
const lines: Array<{ text: string; value: Record<string, unknown> }> = [];
let service: RunningService;

before(async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-access-log-'));
  writeFileSync(
    join(folder, 'script.json'),
    JSON.stringify([
      { when: `${PROMPT} answer`, steps: [[{ type: 'text', text: `${ANSWER} for you` }]] },
      {
        when: `${PROMPT} tool`,
        steps: [[{ type: 'tool_use', name: 'lookup', input: { query: `${TOOL_INPUT} please` } }]],
      },
    ]),
  );
  service = await startService(
    {
      apiKeys: [SECRET_KEY],
      models: [
        ...scriptedModels({ script: 'script.json', faults: true }),
        {
          id: 'slow',
          tier: 'mid',
          generation: 'newer',
          contextWindow: 4096,
          maxOutputTokens: 512,
          backend: { type: 'scripted', tokenDelayMs: 30 },
        },
      ],
    },
    folder,
    {
      log: {
        level: 'trace',
        destination: {
          write(text: string) {
            for (const line of text.split('\n').filter(Boolean)) lines.push({ text: line, value: JSON.parse(line) });
          },
        },
      },
    },
  );
});
after(() => service.close());

function post(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return postJson(
    service,
    '/v1/messages',
    { model: 'mid-newer', max_tokens: 200, ...body },
    { 'x-api-key': SECRET_KEY, ...headers },
  );
}

/** The access line of the reply's request, once it is written (a stream's comes as it ends). */
async function accessLine(response: Response): Promise<Record<string, unknown>> {
  const requestId = response.headers.get('request-id');
  assert.ok(requestId, 'the reply names its request');
  for (let waited = 0; waited < 5_000; waited += 10) {
    const line = lines.find(({ value }) => value.msg === 'request' && value.reqId === requestId);
    if (line) return line.value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no access line for ${requestId}`);
}

const KEY_ID = `key-${createHash('sha256').update(SECRET_KEY).digest('hex').slice(0, 8)}`;

test('a JSON reply: one access line at info with the key id, model, backend, status, stop reason, tokens and times', async () => {
  const response = await post({ messages: [{ role: 'user', content: `${PROMPT} answer` }] });
  assert.equal(response.status, 200);
  const reply = (await response.json()) as { usage: { input_tokens: number; output_tokens: number } };
  const line = await accessLine(response);
  assert.equal(line.level, 30);
  assert.equal(line.method, 'POST');
  assert.equal(line.route, '/v1/messages');
  assert.equal(line.keyId, KEY_ID);
  assert.equal(line.model, 'mid-newer');
  assert.equal(line.backend, 'scripted');
  assert.equal(line.status, 200);
  assert.equal(line.errorCode, undefined);
  assert.equal(line.stopReason, 'end_turn');
  assert.equal(line.inputTokens, reply.usage.input_tokens);
  assert.equal(line.outputTokens, reply.usage.output_tokens);
  assert.equal(line.streamed, false);
  assert.equal(line.disconnected, false);
  assert.equal(typeof line.firstTokenMs, 'number');
  assert.ok((line.durationMs as number) >= (line.firstTokenMs as number));
  assert.equal(lines.filter(({ value }) => value.reqId === line.reqId && value.msg === 'request').length, 1);
});

test('a stream: its line is written when it ends, says streamed, and names an alias by the model it resolved to', async () => {
  const response = await post({
    model: 'mid',
    stream: true,
    messages: [{ role: 'user', content: `${PROMPT} answer` }],
  });
  const events = await readSse(response);
  assert.equal(events.at(-1)?.event, 'message_stop');
  const line = await accessLine(response);
  assert.equal(line.model, 'mid-newer');
  assert.equal(line.streamed, true);
  assert.equal(line.status, 200);
  assert.equal(line.stopReason, 'end_turn');
  assert.ok((line.outputTokens as number) > 0);
});

test('a tool call and failures: the error code and its status, for a stream the code of its error event', async () => {
  const tool = await post({
    tools: [
      {
        name: 'lookup',
        description: 'Looks a thing up.',
        input_schema: { type: 'object', properties: { query: { type: 'string' } } },
      },
    ],
    messages: [{ role: 'user', content: `${PROMPT} tool` }],
  });
  assert.equal(tool.status, 200, await tool.clone().text());
  assert.equal((await accessLine(tool)).stopReason, 'tool_use');

  const failed = await post({ messages: [{ role: 'user', content: PROMPT }] }, { 'mms-fault': 'http-500' });
  assert.equal(failed.status, 500);
  const failedLine = await accessLine(failed);
  assert.equal(failedLine.status, 500);
  assert.equal(failedLine.errorCode, 'internal');

  const cut = await post(
    { stream: true, messages: [{ role: 'user', content: `${PROMPT} answer` }] },
    { 'mms-fault': 'stream-error' },
  );
  assert.equal((await readSse(cut)).at(-1)?.event, 'error');
  const cutLine = await accessLine(cut);
  assert.equal(cutLine.status, 200, 'the stream had sent its status');
  assert.equal(cutLine.errorCode, 'internal');

  const unknown = await post({ model: MISSING_MODEL, messages: [{ role: 'user', content: PROMPT }] });
  assert.equal(unknown.status, 404);
  const unknownLine = await accessLine(unknown);
  assert.equal(unknownLine.errorCode, 'not_found');
  assert.equal(unknownLine.model, undefined);

  const refused = await postJson(service, '/v1/messages', { model: 'mid' }, { 'x-api-key': `${SECRET_KEY}-wrong` });
  assert.equal(refused.status, 401);
  const refusedLine = await accessLine(refused);
  assert.equal(refusedLine.keyId, undefined, 'a key that is not configured has no id');
  assert.equal(refusedLine.errorCode, 'authentication');
});

test('a stream whose client goes away is logged when it stops, and says so', async () => {
  const response = await post({
    model: 'slow',
    stream: true,
    messages: [{ role: 'user', content: `${PROMPT} ${'word '.repeat(100)}` }],
  });
  const reader = response.body!.getReader();
  await reader.read();
  await reader.cancel();
  const line = await accessLine(response);
  assert.equal(line.disconnected, true);
  assert.equal(line.streamed, true);
  assert.equal(line.model, 'slow');
});

test('a JSON request whose client goes away is logged as 499, with no error code of the service', async () => {
  const controller = new AbortController();
  const sent = fetch(`${service.baseURL}/v1/messages`, {
    method: 'POST',
    headers: { ...service.headers, 'x-api-key': SECRET_KEY },
    body: JSON.stringify({ model: 'slow', max_tokens: 200, messages: [{ role: 'user', content: 'word '.repeat(60) }] }),
    signal: controller.signal,
  });
  const before = lines.length;
  await new Promise((resolve) => setTimeout(resolve, 100));
  controller.abort();
  await sent.catch(() => undefined);
  let line: Record<string, unknown> | undefined;
  for (let waited = 0; line === undefined && waited < 5_000; waited += 10) {
    line = lines.slice(before).find(({ value }) => value.msg === 'request' && value.model === 'slow')?.value;
    if (line === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(line, 'an access line');
  assert.equal(line.status, 499);
  assert.equal(line.errorCode, undefined);
  assert.equal(line.disconnected, true);
  assert.equal(line.streamed, false);
});

test('at level trace, no line holds the key, the prompt, the answer, a tool input or a name the client sent', async () => {
  // The requests above ran at trace; a count_tokens and a models lookup add their own paths.
  const counted = await postJson(
    service,
    '/v1/messages/count_tokens',
    { model: 'mid', messages: [{ role: 'user', content: PROMPT }] },
    { 'x-api-key': SECRET_KEY },
  );
  assert.equal(counted.status, 200);
  await accessLine(counted);
  assert.ok(lines.length >= 8, `${lines.length} lines`);
  for (const { text } of lines) {
    for (const secret of SECRETS) assert.ok(!text.includes(secret), `a log line holds ${secret}: ${text}`);
  }
});
