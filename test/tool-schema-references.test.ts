/**
 * A tool schema's `$ref`s through POST /v1/messages on the scripted backend, configured as
 * examples/scripted.json: a reference the request check (Ajv) accepts, the scripted backend
 * resolves to the same schema, so the forced tool's input is valid against it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { schemaViolation } from '@model-messages/protocol';
import type { ServiceConfigInput } from '@model-messages/server';
import { postJson, startService, type RunningService } from '@model-messages/testing';

const example = JSON.parse(readFileSync(new URL('../examples/scripted.json', import.meta.url), 'utf8')) as {
  models: ServiceConfigInput['models'];
};

let service: RunningService;
before(async () => {
  service = await startService({ models: example.models });
});
after(() => service.close());

const inputSchema = {
  type: 'object',
  properties: {
    // A URI fragment's percent-encoding: %25 is "%"; %24 is "$"; %2F is a "/" inside the key, as Ajv reads it.
    label: { $ref: '#/$defs/a%25b' },
    kind: { $ref: '#/%24defs/a%2Fb' },
    // Recursion through the root.
    next: { anyOf: [{ $ref: '#' }, { type: 'null' }] },
  },
  required: ['label', 'kind', 'next'],
  additionalProperties: false,
  $defs: {
    'a%b': { type: 'string', const: 'percent' },
    'a/b': { type: 'string', const: 'slash' },
  },
};

test('a strict tool whose schema recurses through "#" and uses percent-encoded pointers is answered with a valid input', async () => {
  const response = await postJson(service, '/v1/messages', {
    model: 'mid',
    max_tokens: 1024,
    messages: [{ role: 'user', content: 'Record one.' }],
    tools: [{ name: 'record', description: 'Record one entry.', strict: true, input_schema: inputSchema }],
    tool_choice: { type: 'tool', name: 'record' },
  });
  const body = (await response.json()) as { content?: Array<{ type: string; input?: unknown }>; error?: unknown };
  assert.equal(response.status, 200, JSON.stringify(body));
  const input = body.content?.find((block) => block.type === 'tool_use')?.input;
  assert.deepEqual(input, { label: 'percent', kind: 'slash', next: null });
  assert.equal(schemaViolation(inputSchema, input), undefined);
});
