/** The scripted backend: default answers, scripts, budgets, stop sequences and injected faults. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { postJson, readSse, scriptedModels, startService, type RunningService } from '@model-messages/testing';

interface Reply {
  content: Array<{
    type: string;
    text?: string;
    input?: Record<string, unknown>;
    thinking?: string;
    signature?: string;
    name?: string;
  }>;
  stop_reason: string;
  stop_sequence: string | null;
  usage: { input_tokens: number; output_tokens: number };
  error?: { type: string; message: string };
}

let service: RunningService;
let faultless: RunningService;
before(async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-scripted-'));
  writeFileSync(
    join(folder, 'script.json'),
    JSON.stringify([
      {
        when: 'weather in (\\w+)',
        steps: [
          [{ type: 'tool_use', id: 'toolu_weather', name: 'get_weather', input: { city: 'Paris' } }],
          [{ type: 'text', text: 'It is sunny in Paris.' }],
        ],
      },
      {
        when: '^think$',
        steps: [
          [
            { type: 'thinking', thinking: 'Scripted thought.' },
            { type: 'text', text: 'Done.' },
          ],
        ],
      },
      {
        when: '^cut the call$',
        steps: [
          [
            { type: 'text', text: 'ok' },
            { type: 'tool_use', name: 'emit', input: { a: 'value here' } },
          ],
        ],
      },
    ]),
  );
  service = await startService({ models: scriptedModels({ script: 'script.json', faults: true }) }, folder);
  faultless = await startService();
});
after(async () => {
  await service.close();
  await faultless.close();
});

const user = (content: string) => ({ role: 'user', content });
const base = { model: 'mid', max_tokens: 300, messages: [user('Repeat after me: the quick brown fox.')] };

async function send(
  body: unknown,
  headers: Record<string, string> = {},
  target = service,
): Promise<{ status: number; reply: Reply; headers: Headers }> {
  const response = await postJson(target, '/v1/messages', body, headers);
  return { status: response.status, reply: (await response.json()) as Reply, headers: response.headers };
}

const ajv = new Ajv2020({ strict: false });

describe('default answer', () => {
  test('echoes the last user text', async () => {
    const { reply } = await send(base);
    assert.deepEqual(reply.content, [{ type: 'text', text: 'Repeat after me: the quick brown fox.', citations: null }]);
    assert.equal(reply.stop_reason, 'end_turn');
  });

  test('after a tool_result that holds an image, echoes its text; the image is part of the prompt it counts', async () => {
    const screenshot = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
    const body = (content: unknown[]) => ({
      ...base,
      tools: [{ name: 'read_screenshot', description: 'Reads a screenshot.', input_schema: { type: 'object' } }],
      messages: [
        user('Look at the screenshot.'),
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_screenshot', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] },
      ],
    });
    const withImage = body([{ type: 'text', text: 'shot-1.png' }, screenshot]);
    const { status, reply } = await send(withImage);
    assert.equal(status, 200);
    assert.deepEqual(reply.content, [{ type: 'text', text: 'shot-1.png', citations: null }]);
    const { reply: withoutImage } = await send(body([{ type: 'text', text: 'shot-1.png' }]));
    assert.ok(reply.usage.input_tokens > withoutImage.usage.input_tokens);
  });

  test('thinks first when the request thinks, with a signature', async () => {
    const { reply } = await send({ ...base, thinking: { type: 'adaptive' } });
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['thinking', 'text'],
    );
    assert.ok((reply.content[0]?.signature ?? '').length > 10);
  });

  const schemas: Record<string, Record<string, unknown>> = {
    flat: {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name', 'age'],
      additionalProperties: false,
    },
    nested: {
      type: 'object',
      properties: {
        owner: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        tags: { type: 'array', items: { enum: ['a', 'b'] } },
      },
      required: ['owner', 'tags'],
    },
    recursive: {
      type: 'object',
      properties: { root: { $ref: '#/$defs/node' } },
      required: ['root'],
      $defs: {
        node: {
          type: 'object',
          properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } },
          required: ['children'],
        },
      },
    },
    nullable: {
      type: 'object',
      properties: { note: { anyOf: [{ type: 'null' }, { type: 'string' }] }, kind: { const: 'fixed' } },
      required: ['note', 'kind'],
    },
  };
  for (const [name, schema] of Object.entries(schemas)) {
    test(`a forced tool gets input valid against its schema (${name})`, async () => {
      const tools = [{ name: 'emit', description: 'Emit it.', strict: true, input_schema: schema }];
      const { reply } = await send({
        ...base,
        tools,
        tool_choice: { type: 'tool', name: 'emit', disable_parallel_tool_use: true },
      });
      assert.equal(reply.content.length, 1);
      assert.equal(reply.content[0]?.name, 'emit');
      assert.ok(ajv.validate(schema, reply.content[0]?.input), JSON.stringify(ajv.errors));
      assert.equal(reply.stop_reason, 'tool_use');
    });
  }

  test('output_config.format is answered with text that is JSON valid against the schema', async () => {
    const schema = schemas.nested!;
    const { reply } = await send({ ...base, output_config: { format: { type: 'json_schema', schema } } });
    assert.equal(reply.content[0]?.type, 'text');
    assert.ok(ajv.validate(schema, JSON.parse(reply.content[0]?.text ?? '')), JSON.stringify(ajv.errors));
  });

  // A 500 would be retried by clients, and the same schema fails the same way every time.
  const unbuildable: Array<[string, Record<string, unknown>, string, RegExp]> = [
    [
      'a required property that additionalProperties forbids',
      { type: 'object', properties: {}, required: ['zz'], additionalProperties: false },
      'additionalProperties',
      /schema is false/,
    ],
    [
      'a required property whose schema is false',
      { type: 'object', properties: { a: false }, required: ['a'] },
      'properties.a',
      /schema is false/,
    ],
    [
      'minLength above maxLength',
      { type: 'object', properties: { a: { type: 'string', minLength: 5, maxLength: 2 } }, required: ['a'] },
      'properties.a',
      /minLength 5 exceeds maxLength 2/,
    ],
    [
      'allOf with conflicting types',
      { type: 'object', properties: { a: { allOf: [{ type: 'string' }, { type: 'integer' }] } }, required: ['a'] },
      'properties.a.allOf',
      /types conflict/,
    ],
    [
      'minItems past what can be built',
      { type: 'object', properties: { a: { type: 'array', minItems: 1e8 } }, required: ['a'] },
      'properties.a',
      /minItems 100000000 asks for more than/,
    ],
    // Refused before building: trying each of 100,000 properties held the event loop 420 ms.
    [
      'minProperties past what can be built',
      { type: 'object', minProperties: 100_000 },
      '',
      /minProperties 100000 asks for more than/,
    ],
  ];
  for (const [name, schema, inner, reason] of unbuildable) {
    test(`a forced tool whose schema has no value the backend can build is 400 naming the field (${name})`, async () => {
      const tools = [
        { name: 'other', description: 'Unused.', input_schema: { type: 'object' } },
        { name: 'emit', description: 'Emit it.', input_schema: schema },
      ];
      const { status, reply } = await send(
        { ...base, tools, tool_choice: { type: 'tool', name: 'emit' } },
        {},
        faultless,
      );
      assert.equal(status, 400, JSON.stringify(reply));
      assert.equal(reply.error?.type, 'invalid_request_error');
      const field = ['tools.1.input_schema', inner].filter(Boolean).join('.');
      assert.ok(reply.error?.message.startsWith(`${field}: `), reply.error?.message);
      assert.match(reply.error?.message ?? '', reason);
    });
  }

  test('an output_config.format schema with no value the backend can build is 400 naming the field', async () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string', minLength: 5, maxLength: 2 } },
      required: ['a'],
    };
    const { status, reply } = await send(
      { ...base, output_config: { format: { type: 'json_schema', schema } } },
      {},
      faultless,
    );
    assert.equal(status, 400, JSON.stringify(reply));
    assert.equal(reply.error?.type, 'invalid_request_error');
    assert.match(
      reply.error?.message ?? '',
      /^output_config\.format\.schema\.properties\.a: .*minLength 5 exceeds maxLength 2/,
    );
  });

  test('a minLength too long to write is a 400 naming the place, not a 500', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string', minLength: 1e9 } }, required: ['a'] };
    const { status, reply } = await send(
      { ...base, output_config: { format: { type: 'json_schema', schema } } },
      {},
      faultless,
    );
    assert.equal(status, 400, JSON.stringify(reply));
    assert.match(reply.error?.message ?? '', /^output_config\.format\.schema\.properties\.a: .*minLength 1000000000/);
  });

  test('max_tokens truncates with stop_reason max_tokens and exact usage', async () => {
    const { reply } = await send({ ...base, max_tokens: 3 });
    assert.deepEqual(reply.content, [{ type: 'text', text: 'Repeat after me', citations: null }]);
    assert.equal(reply.stop_reason, 'max_tokens');
    assert.equal(reply.usage.output_tokens, 3);
  });

  test('thinking never takes the whole budget: the answer still starts', async () => {
    const { reply } = await send({ ...base, max_tokens: 6, thinking: { type: 'adaptive' } });
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['thinking', 'text'],
    );
    assert.equal(reply.usage.output_tokens, 6);
    assert.equal(reply.stop_reason, 'max_tokens');
  });

  test('a stop sequence ends the text before it and is reported', async () => {
    const { reply } = await send({ ...base, stop_sequences: ['brown', 'me'] });
    assert.equal(reply.content[0]?.text, 'Repeat after ');
    assert.equal(reply.stop_reason, 'stop_sequence');
    assert.equal(reply.stop_sequence, 'me');
  });

  test('a stop sequence at the very start gives no empty text block', async () => {
    const { reply } = await send({ ...base, stop_sequences: ['Repeat'] });
    assert.deepEqual(reply.content, []);
    assert.equal(reply.stop_reason, 'stop_sequence');
    assert.equal(reply.usage.output_tokens, 0);
  });

  test('a truncated tool input keeps what arrived', async () => {
    const schema = {
      type: 'object',
      properties: { first: { type: 'string' }, second: { type: 'string' } },
      required: ['first', 'second'],
    };
    const tools = [{ name: 'emit', description: 'Emit it.', input_schema: schema }];
    // Seven tokens are `{"first":"example`: the cut string is closed and kept.
    const { reply } = await send({ ...base, max_tokens: 7, tools, tool_choice: { type: 'tool', name: 'emit' } });
    assert.equal(reply.stop_reason, 'max_tokens');
    assert.equal(reply.content[0]?.type, 'tool_use');
    assert.deepEqual(reply.content[0]?.input, { first: 'example' });
  });

  test('a forced call cut by max_tokens under disable_parallel_tool_use is max_tokens, with its tokens counted', async () => {
    const schema = {
      type: 'object',
      properties: { first: { type: 'string' }, second: { type: 'string' } },
      required: ['first', 'second'],
    };
    const tools = [{ name: 'emit', description: 'Emit it.', input_schema: schema }];
    const { reply } = await send({
      ...base,
      max_tokens: 7,
      tools,
      tool_choice: { type: 'tool', name: 'emit', disable_parallel_tool_use: true },
    });
    assert.equal(reply.stop_reason, 'max_tokens');
    assert.equal(reply.usage.output_tokens, 7);
  });

  test('tool_choice any with several tools: the input streams token by token, and a call cut by max_tokens keeps what came', async () => {
    const tool = (name: string, field: string) => ({
      name,
      description: `The ${field}.`,
      input_schema: { type: 'object', properties: { [field]: { type: 'string' } }, required: [field] },
    });
    const body = {
      ...base,
      tools: [tool('get_weather', 'city'), tool('get_time', 'zone')],
      tool_choice: { type: 'any' },
    };
    const response = await postJson(service, '/v1/messages', { ...body, stream: true });
    const pieces = (await readSse(response))
      .map((event) => event.data as { type: string; delta?: { type: string; partial_json?: string } })
      .filter((event) => event.type === 'content_block_delta' && event.delta?.type === 'input_json_delta')
      .map((event) => event.delta!.partial_json!);
    assert.ok(pieces.length > 3, JSON.stringify(pieces));
    assert.deepEqual(JSON.parse(pieces.join('')), { city: 'example city' });
    // Seven tokens are `{"city":"example`: the cut string is closed and kept.
    const { reply } = await send({ ...body, max_tokens: 7 });
    assert.deepEqual(
      reply.content.map((block) => [block.type, block.name, block.input]),
      [['tool_use', 'get_weather', { city: 'example' }]],
    );
    assert.equal(reply.stop_reason, 'max_tokens');
  });
});

describe('script', () => {
  const tools = [
    {
      name: 'get_weather',
      description: 'Weather for a city.',
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ];

  test('step 0 of the matching entry is the first answer', async () => {
    const { reply } = await send({ ...base, tools, messages: [user('What is the weather in Paris?')] });
    assert.deepEqual(reply.content, [
      {
        type: 'tool_use',
        id: 'toolu_weather',
        name: 'get_weather',
        input: { city: 'Paris' },
        caller: { type: 'direct' },
      },
    ]);
    assert.equal(reply.stop_reason, 'tool_use');
  });

  test('a client tool round trip moves on to step 1', async () => {
    const messages = [
      user('What is the weather in Paris?'),
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_weather', name: 'get_weather', input: { city: 'Paris' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_weather', content: '21 C, clear' }] },
    ];
    const { reply } = await send({ ...base, tools, messages });
    assert.deepEqual(reply.content, [{ type: 'text', text: 'It is sunny in Paris.', citations: null }]);
  });

  test('scripted thinking blocks are emitted as written', async () => {
    const { reply } = await send({ ...base, messages: [user('think')] });
    assert.equal(reply.content[0]?.thinking, 'Scripted thought.');
    assert.equal(reply.content[1]?.text, 'Done.');
  });

  for (const disableParallel of [false, true]) {
    test(`a call cut by max_tokens as it opened, before any input, is max_tokens (disable_parallel_tool_use ${disableParallel})`, async () => {
      const tools = [
        {
          name: 'emit',
          description: 'Emit it.',
          input_schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        },
      ];
      const { reply } = await send({
        ...base,
        max_tokens: 1,
        messages: [user('cut the call')],
        tools,
        tool_choice: { type: 'auto', disable_parallel_tool_use: disableParallel },
      });
      assert.deepEqual(
        reply.content.map((block) => block.type),
        ['text', 'tool_use'],
      );
      assert.equal(reply.stop_reason, 'max_tokens');
      assert.equal(reply.usage.output_tokens, 1);
    });
  }
});

describe('faults', () => {
  for (const [fault, status, type] of [
    ['http-500', 500, 'api_error'],
    ['http-529', 529, 'overloaded_error'],
    ['http-429', 429, 'rate_limit_error'],
  ] as const) {
    test(`${fault} answers ${status} ${type}`, async () => {
      const { status: actual, reply, headers } = await send(base, { 'mms-fault': fault });
      assert.equal(actual, status);
      assert.equal(reply.error?.type, type);
      if (status !== 500) assert.equal(headers.get('retry-after'), '1');
    });
  }

  const tools = [
    {
      name: 'emit',
      description: 'Emit it.',
      strict: true,
      input_schema: {
        type: 'object',
        properties: { name: { type: 'string' } },
        required: ['name'],
        additionalProperties: false,
      },
    },
  ];
  const forced = { ...base, tools, tool_choice: { type: 'tool', name: 'emit' } };

  test('truncate stops early with stop_reason max_tokens', async () => {
    const { reply } = await send(base, { 'mms-fault': 'truncate' });
    assert.equal(reply.stop_reason, 'max_tokens');
    assert.ok((reply.content[0]?.text ?? '').length < 'Repeat after me: the quick brown fox.'.length);
  });

  test('no-tool-call answers text instead of the forced tool', async () => {
    const { reply } = await send(forced, { 'mms-fault': 'no-tool-call' });
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['text'],
    );
    assert.equal(reply.stop_reason, 'end_turn');
  });

  test('invalid-tool-input calls the tool with input that fails its schema', async () => {
    const { reply } = await send(forced, { 'mms-fault': 'invalid-tool-input' });
    assert.equal(reply.content[0]?.type, 'tool_use');
    assert.equal(ajv.validate(tools[0]!.input_schema, reply.content[0]?.input), false);
  });

  test('an unknown fault name is 400 listing the known ones', async () => {
    const { status, reply } = await send(base, { 'mms-fault': 'meteor' });
    assert.equal(status, 400);
    assert.match(reply.error?.message ?? '', /unknown fault "meteor".*http-500/);
  });

  test('without faults: true in the config the header is ignored', async () => {
    const { status, reply } = await send(base, { 'mms-fault': 'http-500' }, faultless);
    assert.equal(status, 200);
    assert.equal(reply.stop_reason, 'end_turn');
  });
});

describe('token delay', () => {
  let slow: RunningService;
  before(async () => {
    slow = await startService({ models: scriptedModels({ tokenDelayMs: 15 }) });
  });
  after(() => slow.close());

  // A lower bound only: each delay is a timer that cannot fire early, so this holds on any machine.
  test('a reply that is not streamed still waits the delay once per token', async () => {
    const words = Array.from({ length: 12 }, (_, index) => `word${index}`).join(' ');
    const started = performance.now();
    const { reply } = await send({ ...base, messages: [user(words)] }, {}, slow);
    const elapsed = performance.now() - started;
    assert.equal(reply.content[0]?.text, words);
    assert.equal(reply.usage.output_tokens, 12);
    assert.ok(elapsed >= 12 * 15 * 0.9, `12 tokens at 15 ms each took only ${Math.round(elapsed)} ms`);
  });
});
