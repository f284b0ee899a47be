/**
 * Clients that pick their own model ids (Claude Code), over HTTP: alias patterns route them to a
 * configured model, a model listed as ids a client's picker keeps is listed under them (issue 34),
 * and a model that clamps lowers their max_tokens and says so in a header, on JSON and streamed
 * replies alike; a model that refuses still answers 400.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { postJson, readSse, startService, type RunningService } from '@model-messages/testing';

const CLAMPED = 'mms-max-tokens-clamped';
const model = { tier: 'mid', generation: 'newer', contextWindow: 4096, maxOutputTokens: 2048 } as const;
const scripted = { type: 'scripted' } as const;

let service: RunningService;
before(async () => {
  service = await startService({
    models: [
      { ...model, id: 'exact', aliases: ['mid'], backend: scripted },
      {
        ...model,
        id: 'clamping',
        aliases: ['claude-*'],
        listAs: ['claude-house-large', 'claude-house-fast'],
        displayName: 'House model',
        maxTokens: 'clamp',
        backend: scripted,
      },
      { ...model, id: 'refusing', aliases: ['strict-*'], backend: scripted },
    ],
  });
});
after(() => service.close());

const request = (name: string, maxTokens: number, extra: Record<string, unknown> = {}) => ({
  model: name,
  max_tokens: maxTokens,
  messages: [{ role: 'user', content: 'hello' }],
  ...extra,
});

async function reply(body: unknown) {
  const response = await postJson(service, '/v1/messages', body);
  const json = (await response.json()) as { model?: string; error?: { message: string } };
  return { response, json };
}

describe('alias patterns', () => {
  test('a request for an id the client chose is answered by the model of the pattern, named as for an exact alias', async () => {
    const byPattern = await reply(request('claude-opus-5-5', 100));
    assert.equal(byPattern.response.status, 200, JSON.stringify(byPattern.json));
    assert.equal(byPattern.json.model, 'clamping');
    // The reply names the model resolved to, as it does for an exact alias.
    const byAlias = await reply(request('mid', 100));
    assert.equal(byAlias.json.model, 'exact');
  });

  test('GET /v1/models/{id} resolves a pattern to its model', async () => {
    const response = await fetch(`${service.baseURL}/v1/models/claude-x`, { headers: service.headers });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { id: string }).id, 'clamping');
  });

  test('a name that no pattern matches is still 404', async () => {
    const { response, json } = await reply(request('gpt-5', 100));
    assert.equal(response.status, 404);
    assert.match(json.error?.message ?? '', /model: gpt-5 was not found/);
  });
});

describe('listAs: the ids GET /v1/models lists', () => {
  test('Claude Code asks for the list at start: the listed ids come in place of the model id, others as they were', async () => {
    const response = await fetch(`${service.baseURL}/v1/models?limit=1000`, { headers: service.headers });
    const list = (await response.json()) as { data: Array<{ id: string; display_name: string }>; has_more: boolean };
    assert.equal(response.status, 200);
    assert.deepEqual(
      list.data.map((entry) => [entry.id, entry.display_name]),
      [
        ['exact', 'exact'],
        ['claude-house-large', 'House model'],
        ['claude-house-fast', 'House model'],
        ['refusing', 'refusing'],
      ],
    );
    // Its picker keeps the ids that begin with claude or anthropic: these two.
    assert.deepEqual(
      list.data.map((entry) => entry.id).filter((id) => /^(claude|anthropic)/.test(id)),
      ['claude-house-large', 'claude-house-fast'],
    );
    assert.equal(list.has_more, false);
  });

  test('a listed id pages, resolves, and answers under its own name', async () => {
    const page = await fetch(`${service.baseURL}/v1/models?after_id=claude-house-large&limit=1`, {
      headers: service.headers,
    });
    assert.deepEqual(
      ((await page.json()) as { data: Array<{ id: string }> }).data.map((entry) => entry.id),
      ['claude-house-fast'],
    );
    const one = await fetch(`${service.baseURL}/v1/models/claude-house-fast`, { headers: service.headers });
    assert.equal(((await one.json()) as { id: string }).id, 'claude-house-fast');
    const { response, json } = await reply(request('claude-house-large', 100));
    assert.equal(response.status, 200);
    assert.equal(json.model, 'clamping');
  });
});

describe('maxTokens', () => {
  test('clamp: a max_tokens above the limit is lowered to it, and the JSON reply says so', async () => {
    const { response, json } = await reply(request('claude-opus-5-5', 128_000));
    assert.equal(response.status, 200, JSON.stringify(json));
    assert.equal(response.headers.get(CLAMPED), '128000 -> 2048');
    assert.equal(response.headers.get('mms-backend'), 'scripted');
  });

  test('clamp: a streamed reply says so in its headers too', async () => {
    const response = await postJson(service, '/v1/messages', request('claude-opus-5-5', 128_000, { stream: true }));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get(CLAMPED), '128000 -> 2048');
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = await readSse(response);
    assert.equal(events.at(-1)?.event, 'message_stop');
  });

  test('clamp: a max_tokens within the limit is left alone, and no header says otherwise', async () => {
    const { response } = await reply(request('claude-opus-5-5', 2048));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get(CLAMPED), null);
  });

  test('clamp: a thinking budget is judged against the lowered max_tokens, and a 400 names both', async () => {
    const thinking = (budget: number) => ({ thinking: { type: 'enabled', budget_tokens: budget } });
    const refused = await reply(request('claude-opus-5-5', 128_000, thinking(4000)));
    assert.equal(refused.response.status, 400);
    assert.equal(
      refused.json.error?.message,
      'thinking.budget_tokens: 4000 must be less than max_tokens (2048, lowered from 128000 to the maximum allowed number of output tokens for clamping)',
    );
    const fits = await reply(request('claude-opus-5-5', 128_000, thinking(1024)));
    assert.equal(fits.response.status, 200, JSON.stringify(fits.json));
    assert.equal(fits.response.headers.get(CLAMPED), '128000 -> 2048');
  });

  test('refuse, the default: a max_tokens above the limit is 400, through a pattern as through an id', async () => {
    const { response, json } = await reply(request('strict-model', 4096));
    assert.equal(response.status, 400);
    assert.equal(
      json.error?.message,
      'max_tokens: 4096 > 2048, which is the maximum allowed number of output tokens for refusing',
    );
    assert.equal(response.headers.get(CLAMPED), null);
    // The thinking budget's message is as before: nothing was lowered.
    const thinking = await reply(request('strict-model', 2000, { thinking: { type: 'enabled', budget_tokens: 3000 } }));
    assert.equal(thinking.json.error?.message, 'thinking.budget_tokens: 3000 must be less than max_tokens (2000)');
  });
});

test('examples/claude-code.json: Claude Code ids reach its models, and its 128000 max_tokens is clamped', async () => {
  const path = fileURLToPath(new URL('../examples/claude-code.json', import.meta.url));
  const { models } = JSON.parse(readFileSync(path, 'utf8')) as {
    models: NonNullable<Parameters<typeof startService>[0]>['models'];
  };
  const example = await startService({ models });
  try {
    const send = (name: string) =>
      postJson(example, '/v1/messages', request(name, 128_000)).then(async (response) => ({
        model: ((await response.json()) as { model: string }).model,
        clamped: response.headers.get(CLAMPED),
      }));
    assert.deepEqual(await send('claude-opus-5-5'), { model: 'mms-large', clamped: '128000 -> 64000' });
    // *haiku* comes first in the file, so it wins over claude-*.
    assert.deepEqual(await send('claude-haiku-4-5-20251001'), { model: 'mms-small', clamped: '128000 -> 32000' });
  } finally {
    await example.close();
  }
});
