/**
 * The console's admin endpoints (issue 37), over HTTP as the console and curl call them: each
 * answers an admin key only (401 without a key, 403 for another); the requests as they finish,
 * as JSON and as a stream that sends a request made after it opened; usage per key and model
 * from the usage history; each key's limits and quotas as they stand; the engines; and never a
 * word of a prompt, a system prompt, an answer or a tool's input in any of them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, scriptedModels, startService, TEST_API_KEY, type RunningService } from '@model-messages/testing';
import type { LiveRequest as ConsoleLiveRequest } from '../packages/server/console/src/admin-types.js';
import type { LiveRequest } from '../packages/server/src/observability/live-feed.js';

/**
 * The console, a browser project of its own, declares the replies it reads rather than import the
 * server's sources: the type check fails here when its copy of a request entry and the feed's part.
 */
type Same<First, Second> = [First] extends [Second] ? ([Second] extends [First] ? true : false) : false;
export const CONSOLE_READS_THE_FEED_AS_IT_IS: Same<ConsoleLiveRequest, LiveRequest> = true;

const ADMIN = 'mms-admin-key-0123456789abcdef';
const TEAM = 'mms-team-key-0123456789abcdef';
const hash = (key: string) => `sha256:${createHash('sha256').update(key).digest('hex')}`;
/** Words that appear only in what a request sends and its reply generates. */
const SECRETS = ['PROMPT-WORD-zebra', 'SYSTEM-WORD-walrus', 'TOOL-INPUT-WORD-okapi', 'ANSWER-WORD-narwhal'];
const ENDPOINTS = [
  '/v1/admin/requests',
  '/v1/admin/usage?range=hour',
  '/v1/admin/usage?range=month',
  '/v1/admin/keys',
  '/v1/admin/engines',
];

let service: RunningService;

function headers(key: string): Record<string, string> {
  return { 'x-api-key': key, 'anthropic-version': '2023-06-01' };
}

async function get(path: string, key = ADMIN): Promise<Response> {
  return fetch(`${service.baseURL}${path}`, { headers: headers(key) });
}

/** Reads a Server-Sent Events stream until `until` says it has what it waits for. */
async function readEvents(
  response: Response,
  until: (events: Array<{ event: string; data: unknown }>) => boolean,
): Promise<Array<{ event: string; data: unknown }>> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: Array<{ event: string; data: unknown }> = [];
  let text = '';
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    let end: number;
    while ((end = text.indexOf('\n\n')) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const event = block.match(/^event: (.*)$/m)?.[1];
      const data = block.match(/^data: (.*)$/m)?.[1];
      if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) });
    }
  }
  await reader.cancel();
  return events;
}

function ask(key: string, text: string): Promise<Response> {
  return postJson(
    service,
    '/v1/messages',
    {
      model: 'mid',
      max_tokens: 64,
      system: `Be brief. ${SECRETS[1]}`,
      messages: [{ role: 'user', content: text }],
      tools: [{ name: 'lookup', description: 'Looks up.', input_schema: { type: 'object' } }],
    },
    { 'x-api-key': key },
  );
}

before(async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-admin-'));
  writeFileSync(
    join(folder, 'script.json'),
    JSON.stringify([
      { when: 'look it up', steps: [[{ type: 'tool_use', name: 'lookup', input: { query: SECRETS[2] } }]] },
      { when: 'answer me', steps: [[{ type: 'text', text: `Here: ${SECRETS[3]}` }]] },
    ]),
  );
  service = await startService(
    {
      models: scriptedModels({ script: 'script.json' }),
      keys: [
        { id: 'ops', hash: hash(ADMIN), admin: true },
        {
          id: 'team',
          hash: hash(TEAM),
          models: ['mid'],
          limits: { requestsPerMinute: 100, tokensPerDay: 100_000, tokensPerMonth: 1_000_000, concurrent: 4 },
        },
      ],
    },
    folder,
  );
  for (const text of [`look it up ${SECRETS[0]}`, `answer me ${SECRETS[0]}`])
    assert.equal((await ask(TEAM, text)).status, 200);
});
after(() => service.close());

describe('who may read them', () => {
  test('no key is 401, a key without admin 403 naming the endpoint, an admin key 200', async () => {
    for (const path of [...ENDPOINTS, '/v1/admin/requests/stream']) {
      const none = await fetch(`${service.baseURL}${path}`, { headers: { 'anthropic-version': '2023-06-01' } });
      assert.equal(none.status, 401, path);
      for (const key of [TEAM, TEST_API_KEY]) {
        const refused = await get(path, key);
        assert.equal(refused.status, 403, path);
        const body = (await refused.json()) as { error: { type: string; message: string } };
        assert.equal(body.error.type, 'permission_error');
        assert.equal(body.error.message, `GET ${path.split('?')[0]} needs an admin API key`);
      }
    }
    for (const path of ENDPOINTS) assert.equal((await get(path)).status, 200, path);
  });
});

describe("the console's files", () => {
  test('its page and scripts are served; a name it does not have, or one that leaves its folder, is a 404', async () => {
    const page = await fetch(`${service.baseURL}/console`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal((await fetch(`${service.baseURL}/console/main.js`)).status, 200);
    for (const path of ['/console/nothing.js', '/console/..%2Fpackage.json', '/console/index.json']) {
      const response = await fetch(`${service.baseURL}${path}`);
      assert.equal(response.status, 404, path);
      assert.match(
        ((await response.json()) as { error: { message: string } }).error.message,
        /is not a file of the console/,
      );
    }
  });
});

describe('what they say', () => {
  test('the requests: newest first, with key, model, backend, status, tokens, times and tool calls', async () => {
    const { data } = (await (await get('/v1/admin/requests?key_id=team')).json()) as {
      data: Array<Record<string, unknown>>;
    };
    assert.equal(data.length, 2);
    const [answered, called] = data;
    assert.equal(answered!.key_id, 'team');
    assert.equal(answered!.model, 'mid-newer');
    assert.equal(answered!.backend, 'scripted');
    assert.equal(answered!.route, '/v1/messages');
    assert.equal(answered!.status, 200);
    assert.equal(answered!.stop_reason, 'end_turn');
    assert.ok((answered!.input_tokens as number) > 0 && (answered!.output_tokens as number) > 0);
    assert.equal(typeof answered!.first_token_ms, 'number');
    assert.ok((answered!.duration_ms as number) >= (answered!.first_token_ms as number));
    assert.equal(called!.stop_reason, 'tool_use');
    assert.equal(called!.tool_calls, 1);
    assert.equal(called!.tool_call_outcomes, null, 'the scripted backend checks no calls');
    assert.ok(Date.parse(called!.time as string) <= Date.parse(answered!.time as string));
    // The console's own reads are not the service's traffic.
    const all = (await (await get('/v1/admin/requests')).json()) as { data: Array<{ route: string | null }> };
    assert.ok(all.data.every((request) => !request.route?.startsWith('/v1/admin/')));
  });

  test('the stream opens with the recent requests and sends a request made after it opened', async () => {
    const response = await get('/v1/admin/requests/stream');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reading = readEvents(response, (events) => events.some((event) => event.event === 'request'));
    await ask(TEAM, 'answer me once more');
    const events = await reading;
    assert.equal(events[0]!.event, 'recent');
    assert.ok((events[0]!.data as { data: unknown[] }).data.length >= 2);
    const sent = events.find((event) => event.event === 'request')!.data as Record<string, unknown>;
    assert.equal(sent.key_id, 'team');
    assert.equal(sent.status, 200);
  });

  test('usage per key and model over the last hour, and the month', async () => {
    for (const range of ['hour', 'month']) {
      const usage = (await (await get(`/v1/admin/usage?range=${range}`)).json()) as {
        bucket_seconds: number;
        data: Array<{ key_id: string; model: string; requests: number; input_tokens: number; output_tokens: number }>;
      };
      assert.equal(usage.bucket_seconds, range === 'hour' ? 60 : 86_400);
      const team = usage.data.filter((row) => row.key_id === 'team' && row.model === 'mid-newer');
      const requests = team.reduce((sum, row) => sum + row.requests, 0);
      assert.ok(requests >= 2, JSON.stringify(usage.data));
      assert.ok(team.every((row) => row.input_tokens > 0 && row.output_tokens > 0));
    }
    // A name every object inherits is no range either (it was a 500 while `in` checked the list).
    for (const range of ['year', 'toString', 'constructor', '__proto__']) {
      const refused = await get(`/v1/admin/usage?range=${range}`);
      assert.equal(refused.status, 400, range);
      const body = (await refused.json()) as { error: { message: string } };
      assert.match(body.error.message, /range: must be one of hour, day, month/);
    }
  });

  test("each key's limits as the config gives them, and how much of each is left", async () => {
    const { data } = (await (await get('/v1/admin/keys')).json()) as {
      data: Array<{
        id: string;
        admin: boolean;
        models: string[] | null;
        limits: Record<string, number> | null;
        standing: { source: string; in_flight: number; limits: Record<string, Record<string, number | string>> };
      }>;
    };
    assert.deepEqual(
      data.map((key) => key.id),
      ['key-' + createHash('sha256').update(TEST_API_KEY).digest('hex').slice(0, 8), 'ops', 'team'],
    );
    const team = data.find((key) => key.id === 'team')!;
    assert.deepEqual(team.models, ['mid']);
    assert.equal(team.limits?.tokensPerDay, 100_000);
    assert.equal(team.standing.source, 'replica');
    const day = team.standing.limits.tokensPerDay!;
    assert.equal(day.limit, 100_000);
    assert.ok((day.used as number) > 0);
    assert.equal(day.remaining, 100_000 - (day.used as number));
    assert.match(day.reset as string, /T00:00:00Z$/);
    assert.equal(team.standing.limits.requests!.limit, 100);
    assert.equal(JSON.stringify(data).includes('sha256'), false, 'no hash');
  });

  test('every model, its backend, readiness, requests in flight and recent figures', async () => {
    const { models } = (await (await get('/v1/admin/engines')).json()) as {
      models: Array<{
        id: string;
        ready: boolean;
        in_flight: number;
        backends: Array<{
          backend: string;
          ready: boolean;
          state: string;
          circuit: string | null;
          in_flight: number | null;
          recent: { requests: number };
        }>;
      }>;
    };
    assert.deepEqual(
      models.map((model) => model.id),
      scriptedModels().map((model) => model.id),
    );
    const mid = models.find((model) => model.id === 'mid-newer')!;
    assert.equal(mid.ready, true);
    assert.equal(mid.in_flight, 0);
    assert.equal(mid.backends[0]!.backend, 'scripted');
    // A list's members have a circuit and a count in flight (balanced lists, issue 36); one backend alone neither.
    assert.deepEqual([mid.backends[0]!.circuit, mid.backends[0]!.in_flight], [null, null]);
    assert.ok(mid.backends[0]!.recent.requests >= 2);
  });

  test('no endpoint holds a word of a prompt, a system prompt, an answer or a tool input', async () => {
    const texts = await Promise.all(ENDPOINTS.map(async (path) => (await get(path)).text()));
    const stream = await get('/v1/admin/requests/stream');
    const [opening] = await readEvents(stream, (events) => events.length > 0);
    texts.push(JSON.stringify(opening));
    for (const secret of SECRETS)
      for (const [index, text] of texts.entries()) assert.equal(text.includes(secret), false, `${secret} in ${index}`);
  });
});
