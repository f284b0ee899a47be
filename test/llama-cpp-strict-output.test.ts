/**
 * Strict output on the embedded engine: a battery of strict schemas, each answered many times
 * with fresh sampling seeds, and every answer must be valid against its schema. The test model
 * favours closing `"`, `}` and `]` (JSON_CLOSING_BIAS), so answers end well inside the budget;
 * validity comes from the grammar alone, since the weights are random. Last, schemas at the
 * grammar's limits (issue 16), on the same model and service.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  JSON_CLOSING_BIAS,
  postJson,
  startService,
  tinyLlamaModel,
  type RunningService,
} from '@model-messages/testing';

const RUNS_PER_SCHEMA = 6;

let service: RunningService;
before(async () => {
  const model = await tinyLlamaModel({ logitBias: JSON_CLOSING_BIAS });
  service = await startService({
    models: [
      {
        id: 'tiny',
        tier: 'mid',
        generation: 'newer',
        // The model's 4,096 tokens: the schemas at the grammar's limits are documented in the prompt.
        contextWindow: 4096,
        maxOutputTokens: 2048,
        // The wrapper `auto` resolves to for this template, named: resolving it costs most of a second.
        backend: { type: 'llama-cpp', model, threads: 1, concurrency: 1, chatWrapper: 'chatML' },
      },
    ],
  });
});
after(() => service.close());

const battery: Record<string, Record<string, unknown>> = {
  'nested objects': {
    type: 'object',
    properties: {
      owner: {
        type: 'object',
        properties: { name: { type: 'string' }, age: { type: 'integer' } },
        required: ['name', 'age'],
        additionalProperties: false,
      },
    },
    required: ['owner'],
    additionalProperties: false,
  },
  'optional properties': {
    type: 'object',
    properties: {
      id: { type: 'string' },
      nickname: { type: 'string' },
      score: { type: 'number' },
      active: { type: 'boolean' },
    },
    required: ['id'],
    additionalProperties: false,
  },
  anyOf: {
    type: 'object',
    properties: {
      value: {
        anyOf: [
          { type: 'integer' },
          { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
          { type: 'null' },
        ],
      },
    },
    required: ['value'],
    additionalProperties: false,
  },
  'recursive $ref': {
    type: 'object',
    properties: { root: { $ref: '#/$defs/node' } },
    required: ['root'],
    additionalProperties: false,
    $defs: {
      node: {
        type: 'object',
        properties: { label: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
        required: ['label', 'children'],
        additionalProperties: false,
      },
    },
  },
  'enums and consts': {
    type: 'object',
    properties: {
      kind: { enum: ['alpha', 'beta', 'say "hi"', 3, null] },
      version: { const: 2 },
      flag: { enum: [true] },
    },
    required: ['kind', 'version', 'flag'],
    additionalProperties: false,
  },
  'arrays of objects': {
    type: 'object',
    properties: {
      items: {
        type: 'array',
        items: {
          type: 'object',
          properties: { sku: { type: 'string' }, quantity: { type: 'integer' } },
          required: ['sku', 'quantity'],
          additionalProperties: false,
        },
      },
    },
    required: ['items'],
    additionalProperties: false,
  },
  'type arrays and definitions': {
    type: 'object',
    properties: { note: { type: ['string', 'null'] }, point: { $ref: '#/definitions/point' } },
    required: ['note', 'point'],
    additionalProperties: false,
    definitions: {
      point: {
        type: 'object',
        properties: { x: { type: 'number' }, y: { type: 'number' } },
        required: ['x', 'y'],
        additionalProperties: false,
      },
    },
  },
};

const ajv = new Ajv2020({ strict: false });

interface Reply {
  content: Array<{ type: string; input?: unknown; text?: string }>;
  stop_reason: string;
}

async function send(body: Record<string, unknown>): Promise<Reply> {
  const response = await postJson(service, '/v1/messages', {
    model: 'tiny',
    max_tokens: 1500,
    messages: [{ role: 'user', content: 'Fill it in.' }],
    ...body,
  });
  assert.equal(response.status, 200);
  return (await response.json()) as Reply;
}

describe('strict tools on llama.cpp', () => {
  for (const [name, schema] of Object.entries(battery)) {
    test(`every forced call of a strict tool is valid: ${name}`, async () => {
      const tools = [{ name: 'record', description: 'Record the answer.', strict: true, input_schema: schema }];
      // A reply cut by max_tokens is sampled again: random weights may nest a recursive schema
      // past the budget (about 1 in 100 replies here), which says nothing of the grammar. Twice
      // the runs bound it, so a grammar that never closes still fails.
      let finished = 0;
      for (let attempt = 0; attempt < 2 * RUNS_PER_SCHEMA && finished < RUNS_PER_SCHEMA; attempt += 1) {
        const reply = await send({
          tools,
          tool_choice: { type: 'tool', name: 'record', disable_parallel_tool_use: true },
        });
        if (reply.stop_reason === 'max_tokens') continue;
        finished += 1;
        assert.equal(reply.stop_reason, 'tool_use');
        assert.deepEqual(
          reply.content.map((block) => block.type),
          ['tool_use'],
        );
        assert.ok(
          ajv.validate(schema, reply.content[0]?.input),
          `${JSON.stringify(reply.content[0]?.input)}: ${ajv.errorsText()}`,
        );
      }
      assert.equal(finished, RUNS_PER_SCHEMA, `only ${finished} of ${2 * RUNS_PER_SCHEMA} replies finished`);
    });
  }
});

describe('output_config.format on llama.cpp', () => {
  for (const name of ['nested objects', 'arrays of objects', 'anyOf']) {
    test(`every answer is JSON valid against the format schema: ${name}`, async () => {
      const schema = battery[name]!;
      for (let run = 0; run < RUNS_PER_SCHEMA; run += 1) {
        const reply = await send({ output_config: { format: { type: 'json_schema', schema } } });
        assert.equal(reply.stop_reason, 'end_turn');
        assert.ok(ajv.validate(schema, JSON.parse(reply.content[0]?.text ?? '')), ajv.errorsText());
      }
    });
  }
});

describe('stop sequences on llama.cpp', () => {
  test("a stop sequence does not cut a forced tool's JSON input", async () => {
    const schema = battery['nested objects']!;
    for (const strict of [true, false]) {
      const tools = [{ name: 'record', description: 'Record the answer.', strict, input_schema: schema }];
      // Every member of the input is written `"name":`, so ":" would end it at its first key.
      const reply = await send({ tools, tool_choice: { type: 'tool', name: 'record' }, stop_sequences: [':', '"'] });
      assert.equal(reply.stop_reason, 'tool_use');
      assert.ok(
        ajv.validate(schema, reply.content[0]?.input),
        `${JSON.stringify(reply.content[0]?.input)}: ${ajv.errorsText()}`,
      );
    }
  });
});

describe('strict schemas with $ref or anyOf beside other keywords on llama.cpp', () => {
  const shapes: Record<string, Record<string, unknown>> = {
    'type beside anyOf': {
      type: 'object',
      properties: {
        value: {
          type: 'object',
          anyOf: [
            { properties: { n: { type: 'integer' } }, required: ['n'] },
            { properties: { s: { type: 'string' } }, required: ['s'] },
          ],
        },
      },
      required: ['value'],
      additionalProperties: false,
    },
    'type beside $ref': {
      type: 'object',
      $ref: '#/$defs/point',
      $defs: {
        point: {
          properties: { x: { type: 'integer' }, y: { type: 'integer' } },
          required: ['x', 'y'],
          additionalProperties: false,
        },
      },
    },
    'anyOf of enums beside type': {
      type: 'object',
      properties: { choice: { type: 'string', anyOf: [{ enum: ['a', 1] }, { enum: ['b'] }] } },
      required: ['choice'],
      additionalProperties: false,
    },
  };
  for (const [name, schema] of Object.entries(shapes)) {
    test(`a forced strict tool is answered within all the keywords: ${name}`, async () => {
      const tools = [{ name: 'record', description: 'Record the answer.', strict: true, input_schema: schema }];
      for (let run = 0; run < 3; run += 1) {
        const reply = await send({ tools, tool_choice: { type: 'tool', name: 'record' } });
        assert.equal(reply.stop_reason, 'tool_use');
        assert.ok(
          ajv.validate(schema, reply.content[0]?.input),
          `${JSON.stringify(reply.content[0]?.input)}: ${ajv.errorsText()}`,
        );
      }
    });
  }

  test('a strict schema the grammar cannot compile is a 400 naming its path, forced or offered', async () => {
    // Each enum value would have to be checked against the object keywords beside it.
    const schema = {
      type: 'object',
      properties: { pair: { type: 'object', properties: { a: { type: 'integer' } }, anyOf: [{ const: { a: 1 } }] } },
    };
    const tools = [{ name: 'record', description: 'Record the answer.', strict: true, input_schema: schema }];
    for (const tool_choice of [{ type: 'tool', name: 'record' }, { type: 'auto' }]) {
      const response = await postJson(service, '/v1/messages', {
        model: 'tiny',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Fill it in.' }],
        tools,
        tool_choice,
      });
      const body = (await response.json()) as { error: { type: string; message: string } };
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(
        body.error.message,
        /^tools\.0\.input_schema\.properties\.pair\.anyOf\.0\.properties: unsupported "properties" beside "enum"\/"const"/,
      );
    }
  });
});

/**
 * Schemas whose grammar llama.cpp's parser refused were a 500 (issue 16): extra keys beside a
 * long property name nested one grammar group per character. The embedded engine now compiles
 * them, and a schema past the grammar's limits is a 400 naming its place when strict, and is
 * generated under a shape grammar and checked when not.
 */
describe('strict schemas at the grammar limits on llama.cpp', () => {
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

  /** Extra keys beside declared names past the grammar's limits. */
  const pastLimits = () => ({
    type: 'object',
    properties: { inner: { type: 'object', properties: longNames, additionalProperties: true } },
  });

  test('a strict schema past the grammar limits is a 400 naming its place', async () => {
    const schema = pastLimits();
    const { status, json } = await forcedTool(schema, true);
    assert.equal(status, 400, JSON.stringify(json));
    assert.match(
      json.error?.message ?? '',
      /^tools\.0\.input_schema\.properties\.inner: extra keys \(additionalProperties\) beside declared names of more than 8192 characters in all; the llama-cpp backend cannot hold output to this strict schema/,
    );
  });

  test('the same schema without strict is generated under a shape grammar, not refused', async () => {
    const schema = pastLimits();
    const { status, json } = await forcedTool(schema, false);
    assert.equal(status, 200, JSON.stringify(json));
  });
});
