/**
 * Schemas whose grammar llama.cpp's parser refused were a 500 (issue 16): extra keys beside a
 * long property name nested one grammar group per character. The embedded engine now compiles
 * them, and a schema past the grammar's limits is a 400 naming its place when strict, and is
 * generated under a shape grammar and checked when not.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  JSON_CLOSING_BIAS,
  postJson,
  startService,
  tinyLlamaModel,
  type RunningService,
} from '@model-messages/testing';

let service: RunningService;
before(async () => {
  // The model's 4,096 tokens of context hold the schemas below, which the prompt documents.
  const model = await tinyLlamaModel({ logitBias: JSON_CLOSING_BIAS });
  service = await startService({
    models: [
      {
        id: 'tiny',
        tier: 'mid',
        generation: 'newer',
        contextWindow: 4096,
        maxOutputTokens: 1024,
        // The wrapper `auto` resolves to for this template, named: resolving it costs most of a second.
        backend: { type: 'llama-cpp', model, threads: 1, concurrency: 1, chatWrapper: 'chatML' },
      },
    ],
  });
});
after(() => service.close());

async function forcedTool(inputSchema: Record<string, unknown>, strict: boolean) {
  const response = await postJson(service, '/v1/messages', {
    model: 'tiny',
    max_tokens: 200,
    messages: [{ role: 'user', content: 'Record it.' }],
    tools: [{ name: 'record', description: 'Record it.', strict, input_schema: inputSchema }],
    tool_choice: { type: 'tool', name: 'record' },
  });
  const json = (await response.json()) as {
    content?: Array<{ type: string; input?: unknown }>;
    error?: { message: string };
  };
  return { status: response.status, json };
}

/**
 * Names of 1,000 characters each, nine of them: past the characters an extra key is kept from.
 * Written with `false`, one token of the test vocabulary, so that the prompt documenting them is
 * about 2,000 tokens rather than 9,000.
 */
const longNames = Object.fromEntries(Array.from({ length: 9 }, (_, index) => [`${index}${'false'.repeat(200)}`, {}]));

test('a strict tool with extra keys beside a 700-character property name is answered', async () => {
  const name = 'p'.repeat(700);
  const { status, json } = await forcedTool(
    { type: 'object', properties: { [name]: { type: 'string' } }, additionalProperties: true },
    true,
  );
  assert.equal(status, 200, JSON.stringify(json));
  const call = json.content?.find((block) => block.type === 'tool_use');
  assert.equal(typeof call?.input, 'object');
});

test('a strict schema past the grammar limits is a 400 naming its place', async () => {
  const schema = {
    type: 'object',
    properties: { inner: { type: 'object', properties: longNames, additionalProperties: true } },
  };
  const { status, json } = await forcedTool(schema, true);
  assert.equal(status, 400, JSON.stringify(json));
  assert.match(
    json.error?.message ?? '',
    /^tools\.0\.input_schema\.properties\.inner: extra keys \(additionalProperties\) beside declared names of more than 8192 characters in all; the llama-cpp backend cannot hold output to this strict schema/,
  );
});

test('the same schema without strict is generated under a shape grammar, not refused', async () => {
  const schema = {
    type: 'object',
    properties: { inner: { type: 'object', properties: longNames, additionalProperties: true } },
  };
  const { status, json } = await forcedTool(schema, false);
  assert.equal(status, 200, JSON.stringify(json));
});
