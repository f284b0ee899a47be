/**
 * A prompt that cannot fit the context by its length alone is refused before any tokenizing
 * (issue 16), on the scripted and llama-cpp backends, on both endpoints; one within the bound is
 * counted exactly, and count_tokens refuses a prompt over the window as messages does. The
 * sizes here would take seconds to tokenize (a 31 MB prompt held the llama-cpp service 11 to
 * 13 s); how long the service takes is measured by bench/attack/input-cost.ts, not asserted.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, startService, tinyLlamaModel, type RunningService } from '@model-messages/testing';

let service: RunningService;
before(async () => {
  service = await startService({
    models: [
      {
        id: 'tiny',
        tier: 'mid',
        generation: 'newer',
        contextWindow: 1024,
        maxOutputTokens: 1024,
        backend: { type: 'llama-cpp', model: await tinyLlamaModel(), threads: 1 },
      },
      {
        id: 'scripted',
        tier: 'mid',
        generation: 'newer',
        contextWindow: 4096,
        maxOutputTokens: 1024,
        backend: { type: 'scripted' },
      },
    ],
  });
});
after(() => service.close());

async function send(path: string, model: string, content: string) {
  const body = {
    model,
    messages: [{ role: 'user', content }],
    ...(path.endsWith('count_tokens') ? {} : { max_tokens: 8 }),
  };
  const response = await postJson(service, path, body);
  const json = (await response.json()) as { input_tokens?: number; error?: { type: string; message: string } };
  return { status: response.status, json };
}

const PATHS = ['/v1/messages', '/v1/messages/count_tokens'];

/**
 * 1 MB: past the scripted backend's bound (4,096 tokens of at most 192 characters: 786,432), so
 * that it is refused by its length rather than by counting its first slice; far past the
 * llama-cpp one. Each MB costs the service and the client ~0.1 s of CPU to carry and render.
 */
const LONG_PROMPT = 'lorem ipsum dolor sit amet '.repeat(40_000);

describe('refused by length, before tokenizing', () => {
  for (const path of PATHS) {
    test(`llama-cpp ${path}: a 1 MB prompt is 400 prompt_too_long`, async () => {
      const { status, json } = await send(path, 'tiny', LONG_PROMPT);
      assert.equal(status, 400, JSON.stringify(json));
      assert.equal(json.error?.type, 'invalid_request_error');
      // "at least": refused by its length; a count would say exactly how many.
      assert.match(json.error?.message ?? '', /^prompt is too long: at least \d+ tokens > 1023 maximum$/);
    });

    test(`scripted ${path}: a 1 MB prompt is 400 prompt_too_long`, async () => {
      const { status, json } = await send(path, 'scripted', LONG_PROMPT);
      assert.equal(status, 400, JSON.stringify(json));
      assert.match(json.error?.message ?? '', /^prompt is too long: at least \d+ tokens > 4096 maximum$/);
    });
  }
});

describe('within the bound', () => {
  test('llama-cpp: a prompt the bound lets through is counted, then refused by its count', async () => {
    // 7,200 characters: under the bound for a 1,024-token context, over it in tokens.
    const { status, json } = await send('/v1/messages/count_tokens', 'tiny', 'hello '.repeat(1200));
    assert.equal(status, 400);
    assert.match(json.error?.message ?? '', /^prompt is too long: \d+ tokens > 1023 maximum$/);
  });

  test('scripted: count_tokens counts a prompt that fits, and refuses one past the window as messages does', async () => {
    const fits = await send('/v1/messages/count_tokens', 'scripted', 'word '.repeat(1000));
    assert.equal(fits.status, 200);
    assert.ok((fits.json.input_tokens ?? 0) > 1000);
    const over = await send('/v1/messages/count_tokens', 'scripted', 'word '.repeat(5000));
    assert.equal(over.status, 400);
    assert.match(over.json.error?.message ?? '', /^prompt is too long: \d+ tokens > 4096 maximum$/);
  });
});
