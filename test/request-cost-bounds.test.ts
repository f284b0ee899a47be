/**
 * Work bounded before it starts (issue 16): request bodies whose cost grows with their size are
 * refused with a 400 naming the field, on both endpoints, and the service stays up. Sizes are
 * those that used to answer 500 or stall for seconds; the times are measured by
 * bench/attack/input-cost.ts, never asserted here.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_JSON_VALUES } from '@model-messages/protocol';
import { postJson, startService, type RunningService } from '@model-messages/testing';

let service: RunningService;
before(async () => {
  service = await startService();
});
after(() => service.close());

/** `[item,item,...]` as text: building the value first would cost the test more than the service. */
function repeated(item: string, count: number): string {
  return `[${`${item},`.repeat(count - 1)}${item}]`;
}

async function refusal(path: string, body: string): Promise<{ status: number; type?: string; message: string }> {
  const response = await postJson(service, path, body);
  const json = (await response.json()) as { error?: { type: string; message: string } };
  return { status: response.status, type: json.error?.type, message: json.error?.message ?? '' };
}

async function assertHealthy(): Promise<void> {
  const response = await fetch(`${service.baseURL}/health`);
  assert.equal(response.status, 200);
}

describe('a body past the JSON bounds', () => {
  for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
    test(`${path}: a content array of 200,000 invalid items is a 400 naming the array`, async () => {
      const body = `{"model":"mid","max_tokens":5,"messages":[{"role":"user","content":${repeated('1', 200_000)}}]}`;
      const { status, type, message } = await refusal(path, body);
      assert.equal(status, 400, message);
      assert.equal(type, 'invalid_request_error');
      assert.match(
        message,
        new RegExp(`^messages\\.0\\.content: too many values; .* at most ${MAX_JSON_VALUES} JSON values`),
      );
      await assertHealthy();
    });
  }

  test('200,000 invalid messages are a 400 naming messages', async () => {
    const body = `{"model":"mid","max_tokens":5,"messages":${repeated('{"role":"x","content":""}', 200_000)}}`;
    const { status, message } = await refusal('/v1/messages', body);
    assert.equal(status, 400);
    assert.match(message, /^messages: too many values/);
  });

  test('a body large enough to be parsed off the event loop is refused the same way', async () => {
    // 2 MB of values: scanned in a parse worker, never parsed.
    const body = `{"model":"mid","max_tokens":5,"messages":[{"role":"user","content":${repeated('1', 1_000_000)}}]}`;
    const { status, message } = await refusal('/v1/messages', body);
    assert.equal(status, 400);
    assert.match(message, /^messages\.0\.content: too many values/);
    await assertHealthy();
  });

  test('a tool input of many values is refused by the path that leads to it', async () => {
    const input = `{"items":${repeated('{}', MAX_JSON_VALUES)}}`;
    const messages = `[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"look","input":${input}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}]}]`;
    const { status, message } = await refusal('/v1/messages', `{"model":"mid","max_tokens":5,"messages":${messages}}`);
    assert.equal(status, 400);
    assert.match(message, /^messages\.1\.content\.0\.input\.items: too many values/);
  });
});

describe('within the bounds', () => {
  test('a content array of 90,000 invalid items is a 400 naming its first item', async () => {
    const body = `{"model":"mid","max_tokens":5,"messages":[{"role":"user","content":${repeated('1', 90_000)}}]}`;
    const { status, message } = await refusal('/v1/messages', body);
    assert.equal(status, 400);
    assert.equal(message, 'messages.0.content.0: Invalid input: expected object, received number');
  });

  test('a body parsed in a worker is counted as one parsed on the event loop', async () => {
    const wide = await startService({
      models: [
        {
          id: 'wide',
          tier: 'mid',
          generation: 'newer',
          contextWindow: 1_000_000,
          maxOutputTokens: 2048,
          backend: { type: 'scripted' },
        },
      ],
    });
    try {
      const count = async (repeats: number) => {
        const messages = [{ role: 'user', content: 'lorem ipsum '.repeat(repeats) }];
        const response = await postJson(wide, '/v1/messages/count_tokens', { model: 'wide', messages });
        assert.equal(response.status, 200);
        return ((await response.json()) as { input_tokens: number }).input_tokens;
      };
      // 3 MB, over what is parsed on the event loop, in few values; and 1.2 KB.
      assert.equal(await count(250_000), (await count(100)) + 2 * (250_000 - 100));
    } finally {
      await wide.close();
    }
  });

  test('a body in a worker that is not JSON is a 400 saying so', async () => {
    const body = `{"model":"mid","messages":[{"role":"user","content":"${'a'.repeat(600_000)}"}]`;
    const { status, message } = await refusal('/v1/messages', body);
    assert.equal(status, 400);
    assert.match(message, /^The request body is not valid JSON/);
  });

  test('a body in a worker with a __proto__ key is a 400 as on the event loop', async () => {
    const body = `{"model":"mid","max_tokens":5,"messages":[{"role":"user","content":"${'a'.repeat(600_000)}"}],"__proto__":{"x":1}}`;
    const { status, message } = await refusal('/v1/messages', body);
    assert.equal(status, 400);
    assert.match(message, /^The request body is not valid JSON/);
  });
});
