/** Every rule of POST /v1/messages (spec: "Rules tied to this endpoint", Errors), over HTTP. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compiledValidatorBytes } from '@model-messages/protocol';
import { postJson, signedThinking, startService, type RunningService } from '@model-messages/testing';

let service: RunningService;
before(async () => {
  service = await startService();
});
after(() => service.close());

const user = (content: string) => ({ role: 'user', content });
const base = { model: 'mid', max_tokens: 200, messages: [user('What is the weather?')] };
const strictTool = (
  schema: Record<string, unknown> = {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
) => ({
  name: 'record',
  description: 'Record the answer.',
  strict: true,
  input_schema: schema,
});
const webSearch = (extra: Record<string, unknown> = {}) => ({
  type: 'web_search_20260209',
  name: 'web_search',
  max_uses: 5,
  ...extra,
});

async function send(body: unknown) {
  const response = await postJson(service, '/v1/messages', body);
  const json = (await response.json()) as {
    error?: { type: string; message: string };
    content?: Array<Record<string, unknown>>;
    stop_reason?: string;
  };
  return { status: response.status, json };
}

async function expectRefusal(body: unknown, pattern: RegExp) {
  const { status, json } = await send(body);
  assert.equal(status, 400, JSON.stringify(json));
  assert.equal(json.error?.type, 'invalid_request_error');
  assert.match(json.error?.message ?? '', pattern);
}

describe('rule 1: strict schema keywords', () => {
  test('every accepted keyword passes, in nested places', async () => {
    const schema = {
      type: 'object',
      title: 'Answer',
      description: 'An answer',
      properties: {
        kind: { enum: ['a', 'b'] },
        version: { const: 1 },
        tags: { type: 'array', items: { $ref: '#/$defs/tag' } },
        note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        legacy: { $ref: '#/definitions/legacy' },
      },
      required: ['kind', 'version', 'tags', 'note', 'legacy'],
      additionalProperties: false,
      $defs: { tag: { type: 'string' } },
      definitions: { legacy: { type: 'boolean' } },
    };
    const { status, json } = await send({
      ...base,
      tools: [strictTool(schema)],
      tool_choice: { type: 'tool', name: 'record' },
    });
    assert.equal(status, 200, JSON.stringify(json));
  });

  for (const [keyword, schema, path] of [
    [
      'maxLength',
      { type: 'object', properties: { city: { type: 'string', maxLength: 5 } } },
      'tools.0.input_schema.properties.city',
    ],
    [
      'pattern',
      { type: 'object', properties: { list: { type: 'array', items: { type: 'string', pattern: '^a' } } } },
      'tools.0.input_schema.properties.list.items',
    ],
    [
      'format',
      { type: 'object', properties: { either: { anyOf: [{ type: 'string', format: 'email' }] } } },
      'tools.0.input_schema.properties.either.anyOf.0',
    ],
    [
      'minimum',
      { type: 'object', $defs: { count: { type: 'integer', minimum: 0 } } },
      'tools.0.input_schema.$defs.count',
    ],
    [
      'minItems',
      { type: 'object', definitions: { list: { type: 'array', minItems: 1 } } },
      'tools.0.input_schema.definitions.list',
    ],
    ['default', { type: 'object', default: {} }, 'tools.0.input_schema'],
    [
      'oneOf',
      { type: 'object', additionalProperties: { oneOf: [{ type: 'string' }] } },
      'tools.0.input_schema.additionalProperties',
    ],
  ] as const) {
    test(`"${keyword}" under strict: true is 400 naming the keyword and its path`, async () => {
      const { status, json } = await send({ ...base, tools: [strictTool(schema)] });
      assert.equal(status, 400);
      assert.equal(json.error?.type, 'invalid_request_error');
      assert.ok(json.error?.message.startsWith(`${path}: keyword "${keyword}"`), json.error?.message);
    });
  }

  test('the same keywords are accepted on a tool without strict', async () => {
    const tool = {
      name: 'loose',
      description: 'd',
      input_schema: { type: 'object', properties: { city: { type: 'string', maxLength: 5, pattern: '^[A-Z]' } } },
    };
    assert.equal((await send({ ...base, tools: [tool] })).status, 200);
  });

  test('a schema nested past the depth cap is refused', async () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 40; level += 1) schema = { type: 'object', properties: { next: schema } };
    await expectRefusal({ ...base, tools: [strictTool(schema)] }, /nests deeper than 32/);
  });

  test('a property name of 4,000,000 characters is refused before a validator is compiled from it', async () => {
    const name = '"'.repeat(4_000_000);
    const schema = { type: 'object', properties: { [name]: { type: 'string' } }, required: [name] };
    await expectRefusal({ ...base, tools: [{ ...strictTool(schema), strict: false }] }, /more than 200000 characters/);
  });

  test('a schema Ajv cannot compile is refused naming the tool', async () => {
    await expectRefusal(
      {
        ...base,
        tools: [
          {
            name: 'bad',
            description: 'd',
            input_schema: { type: 'object', properties: { x: { type: 'no-such-type' } } },
          },
        ],
      },
      /tools\.0\.input_schema: not a valid JSON Schema/,
    );
  });
});

describe('schema identifiers', () => {
  const tool = (name: string, schema: Record<string, unknown>) => ({ name, description: 'd', input_schema: schema });

  test('two requests whose schemas share an $id but differ are both answered', async () => {
    for (const property of ['first', 'second']) {
      const schema = {
        $id: 'https://example.com/answer',
        type: 'object',
        properties: { [property]: { type: 'string', $id: 'https://example.com/inner' } },
      };
      const { status, json } = await send({ ...base, tools: [tool('record', schema)] });
      assert.equal(status, 200, JSON.stringify(json));
    }
  });

  test('two tools sharing one $id in one request are answered', async () => {
    const tools = [
      tool('one', { $id: 'shared', type: 'object' }),
      tool('two', { $id: 'shared', type: 'object', properties: { a: { type: 'string' } } }),
    ];
    const { status, json } = await send({ ...base, tools });
    assert.equal(status, 200, JSON.stringify(json));
  });
});

describe('what a schema costs (issue 31)', () => {
  // 60 patterns that each unroll to 1,000 Unicode classes: 0.5 s and 90 MB to compile.
  const patternHeavy = (seed: number) => ({
    type: 'object',
    properties: Object.fromEntries(
      Array.from({ length: 60 }, (_, index) => [
        `p${index}`,
        { type: 'string', pattern: `^(a+)+\\pL{1000}${seed}x${index}$` },
      ]),
    ),
  });

  test("a non-strict tool's schema is only checked, never compiled: pattern-heavy tools compile no validator", async () => {
    const before = compiledValidatorBytes();
    for (let seed = 0; seed < 5; seed += 1) {
      const tool = { name: 'loose', description: 'd', input_schema: patternHeavy(seed) };
      const { status, json } = await send({ ...base, tools: [tool] });
      assert.equal(status, 200, JSON.stringify(json));
    }
    assert.equal(compiledValidatorBytes(), before);
  });

  test('an output format whose patterns unroll past the budget is refused naming the pattern', async () => {
    await expectRefusal(
      { ...base, output_config: { format: { type: 'json_schema', schema: patternHeavy(9) } } },
      /^output_config\.format\.schema: not a valid JSON Schema: the pattern "\^\(a\+\)\+\\\\pL\{1000\}9x0\$" takes the schema's patterns past/,
    );
  });
});

describe('schema drafts', () => {
  const draft07 = 'http://json-schema.org/draft-07/schema#';
  // Draft-07's tuple form of `items`, which 2020-12 would refuse (it spells tuples `prefixItems`).
  const pairSchema = (declared: string) => ({
    $schema: declared,
    type: 'object',
    properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] } },
    required: ['pair'],
  });

  test('a tool schema that declares draft-07, as zod-to-json-schema and Pydantic write it, is answered', async () => {
    const tool = { name: 'record', description: 'd', input_schema: pairSchema(draft07) };
    const { status, json } = await send({ ...base, tools: [tool], tool_choice: { type: 'tool', name: 'record' } });
    assert.equal(status, 200, JSON.stringify(json));
    assert.equal(json.stop_reason, 'tool_use');
  });

  test('an output_config.format schema that declares draft-07 is answered', async () => {
    const { status, json } = await send({
      ...base,
      output_config: { format: { type: 'json_schema', schema: pairSchema(draft07) } },
    });
    assert.equal(status, 200, JSON.stringify(json));
  });

  for (const declared of [
    'http://json-schema.org/draft-06/schema#',
    'https://json-schema.org/draft/2019-09/schema',
    'https://json-schema.org/draft/2020-12/schema',
  ]) {
    test(`a tool schema that declares ${declared} is answered`, async () => {
      const tool = {
        name: 'record',
        description: 'd',
        input_schema: { $schema: declared, type: 'object', properties: { city: { type: 'string' } } },
      };
      const { status, json } = await send({ ...base, tools: [tool] });
      assert.equal(status, 200, JSON.stringify(json));
    });
  }

  test('a $schema naming another draft is 400 naming the field and the drafts accepted', async () => {
    const tool = {
      name: 'record',
      description: 'd',
      input_schema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' },
    };
    await expectRefusal(
      { ...base, tools: [tool] },
      /^tools\.0\.input_schema\.\$schema: "http:\/\/json-schema\.org\/draft-04\/schema#" is not a supported JSON Schema draft; supported: 2020-12 .*2019-09 .*draft-07 .*draft-06/,
    );
    const format = { type: 'json_schema', schema: { $schema: 'https://example.com/my-draft', type: 'object' } };
    await expectRefusal({ ...base, output_config: { format } }, /^output_config\.format\.schema\.\$schema: /);
  });

  test('a strict tool schema with $schema is refused by rule 1, $schema being outside the strict keyword list', async () => {
    await expectRefusal(
      {
        ...base,
        tools: [strictTool({ $schema: draft07, type: 'object', properties: {}, additionalProperties: false })],
      },
      /^tools\.0\.input_schema: keyword "\$schema"/,
    );
  });
});

describe('rule 2: thinking with a forced strict tool', () => {
  test('adaptive thinking with tool_choice forcing a strict tool is refused naming the rule', async () => {
    await expectRefusal(
      { ...base, thinking: { type: 'adaptive' }, tools: [strictTool()], tool_choice: { type: 'tool', name: 'record' } },
      /^Rule 2: .*strict tool "record"/,
    );
  });

  test('thinking with tool_choice any and a strict tool is refused', async () => {
    await expectRefusal(
      { ...base, thinking: { type: 'adaptive' }, tools: [strictTool()], tool_choice: { type: 'any' } },
      /^Rule 2/,
    );
  });

  test('thinking with any forced tool, strict or not, is refused as the public API refuses it (issue 32)', async () => {
    const tool = { ...strictTool(), strict: false };
    for (const tool_choice of [{ type: 'tool', name: 'record' }, { type: 'any' }]) {
      await expectRefusal(
        { ...base, thinking: { type: 'adaptive' }, tools: [tool], tool_choice },
        new RegExp(
          `^thinking \\(adaptive\\) cannot be combined with tool_choice "${tool_choice.type}", which forces tool use`,
        ),
      );
    }
    const auto = await send({ ...base, thinking: { type: 'adaptive' }, tools: [tool], tool_choice: { type: 'auto' } });
    assert.equal(auto.status, 200, JSON.stringify(auto.json));
  });

  test('thinking disabled with a forced strict tool is the structured call shape of the newer small tier, and is answered', async () => {
    const { status, json } = await send({
      ...base,
      model: 'small-newer',
      thinking: { type: 'disabled' },
      tools: [strictTool()],
      tool_choice: { type: 'tool', name: 'record', disable_parallel_tool_use: true },
    });
    assert.equal(status, 200);
    assert.deepEqual(
      json.content?.map((block) => block.type),
      ['tool_use'],
    );
  });
});

describe('rule 3: programmatic tool calling conflicts', () => {
  test('web_search without allowed_callers and a strict tool is refused', async () => {
    await expectRefusal(
      { ...base, tools: [webSearch(), strictTool()] },
      /^Rule 3: "web_search" has no allowed_callers.*strict tool "record"/,
    );
  });

  test('web_fetch without allowed_callers and disable_parallel_tool_use is refused', async () => {
    const webFetch = { type: 'web_fetch_20260209', name: 'web_fetch', max_uses: 5, max_content_tokens: 20000 };
    await expectRefusal(
      { ...base, tools: [webFetch], tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
      /^Rule 3: "web_fetch".*disable_parallel_tool_use/,
    );
  });

  test('web_search whose allowed_callers names code execution and a strict tool is refused, saying so', async () => {
    await expectRefusal(
      { ...base, tools: [webSearch({ allowed_callers: ['code_execution_20260521'] }), strictTool()] },
      /^Rule 3: "web_search" has allowed_callers \["code_execution_20260521"\], which names the code execution tool \(code_execution_20260521\) and so asks for programmatic tool calling, and that cannot be combined with the strict tool "record"; set allowed_callers: \["direct"\]$/,
    );
  });

  test('web_fetch allowed to both callers and disable_parallel_tool_use is refused', async () => {
    const webFetch = {
      type: 'web_fetch_20260209',
      name: 'web_fetch',
      max_uses: 5,
      max_content_tokens: 20000,
      allowed_callers: ['direct', 'code_execution_20260521'],
    };
    await expectRefusal(
      { ...base, tools: [webFetch], tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
      /^Rule 3: "web_fetch" has allowed_callers \["direct","code_execution_20260521"\].*tool_choice\.disable_parallel_tool_use/,
    );
  });

  test('allowed_callers ["direct"] makes the same request acceptable', async () => {
    const { status } = await send({
      ...base,
      tools: [webSearch({ allowed_callers: ['direct'] }), strictTool()],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    });
    assert.equal(status, 200);
  });

  test('web_search without allowed_callers alone is answered (eligible, no conflict)', async () => {
    assert.equal((await send({ ...base, tools: [webSearch()] })).status, 200);
  });
});

describe('rule 4: prefill and tools', () => {
  test('a final assistant turn with tools is refused', async () => {
    await expectRefusal(
      { ...base, messages: [user('hi'), { role: 'assistant', content: 'The answer is' }], tools: [strictTool()] },
      /^Rule 4: a prefill/,
    );
  });

  test('a prefill without tools is continued', async () => {
    const { status, json } = await send({
      ...base,
      messages: [user('hi'), { role: 'assistant', content: 'The answer is' }],
    });
    assert.equal(status, 200);
    assert.equal(json.content?.[0]?.type, 'text');
  });
});

describe('rule 5 and versioning: thinking per model generation', () => {
  test('the older small tier rejects adaptive', async () => {
    await expectRefusal(
      { ...base, model: 'small-older', thinking: { type: 'adaptive' } },
      /^Rule 5: thinking "adaptive" is not supported by small-older/,
    );
  });

  for (const model of ['mid-newer', 'large-newer']) {
    test(`${model} rejects disabled`, async () => {
      await expectRefusal(
        { ...base, model, thinking: { type: 'disabled' } },
        new RegExp(`^Rule 5: thinking "disabled" is rejected by ${model}`),
      );
    });
  }

  test('the older mid tier accepts disabled, the newer small tier accepts both', async () => {
    assert.equal((await send({ ...base, model: 'mid-older', thinking: { type: 'disabled' } })).status, 200);
    assert.equal((await send({ ...base, model: 'small-newer', thinking: { type: 'disabled' } })).status, 200);
    assert.equal((await send({ ...base, model: 'small-newer', thinking: { type: 'adaptive' } })).status, 200);
  });

  test('the newer small tier thinks by default on a request that offers a tool', async () => {
    const tool = { name: 'lookup', description: 'Look it up.', input_schema: { type: 'object', properties: {} } };
    const thinking = await send({ ...base, model: 'small-newer', tools: [tool] });
    assert.equal(thinking.json.content?.[0]?.type, 'thinking');
    const disabled = await send({ ...base, model: 'small-newer', tools: [tool], thinking: { type: 'disabled' } });
    assert.deepEqual(
      disabled.json.content?.map((block) => block.type),
      ['text'],
    );
    const noTools = await send({ ...base, model: 'small-newer' });
    assert.deepEqual(
      noTools.json.content?.map((block) => block.type),
      ['text'],
    );
    const olderSmall = await send({ ...base, model: 'small-older', tools: [tool] });
    assert.deepEqual(
      olderSmall.json.content?.map((block) => block.type),
      ['text'],
    );
  });
});

describe('tool_choice', () => {
  const tools = [
    {
      name: 'lookup',
      description: 'Look it up.',
      input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    },
  ];

  test('a forced tool name that is not among the tools is 400 naming it', async () => {
    await expectRefusal(
      { ...base, tools, tool_choice: { type: 'tool', name: 'missing' } },
      /tool_choice\.name: "missing" is not among the tools \(lookup\)/,
    );
  });

  test('any or tool without tools is 400', async () => {
    await expectRefusal({ ...base, tool_choice: { type: 'any' } }, /needs at least one tool/);
  });

  test('auto lets the model answer in text; none never calls a tool', async () => {
    assert.equal((await send({ ...base, tools, tool_choice: { type: 'auto' } })).json.content?.[0]?.type, 'text');
    assert.equal((await send({ ...base, tools, tool_choice: { type: 'none' } })).json.content?.[0]?.type, 'text');
  });

  test('any and tool force a tool_use with stop_reason tool_use', async () => {
    for (const tool_choice of [{ type: 'any' }, { type: 'tool', name: 'lookup' }]) {
      const { json } = await send({ ...base, tools, tool_choice });
      assert.deepEqual(
        json.content?.map((block) => block.type),
        ['tool_use'],
      );
      assert.equal(json.stop_reason, 'tool_use');
      assert.equal(typeof (json.content?.[0]?.input as { q?: unknown }).q, 'string');
    }
  });

  test('duplicate tool names are 400', async () => {
    await expectRefusal({ ...base, tools: [...tools, ...tools] }, /tool names must be unique; "lookup"/);
  });
});

describe('request shape', () => {
  test('an unknown top-level field is 400 naming it', async () => {
    await expectRefusal({ ...base, surprise: true }, /^surprise: Extra inputs are not permitted/);
  });

  test('an unknown field inside a block is 400 with its path', async () => {
    await expectRefusal(
      { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'x', colour: 'red' }] }] },
      /^messages\.0\.content\.0\.colour: Extra inputs/,
    );
  });

  test('a missing required field is 400 naming it', async () => {
    await expectRefusal({ model: 'mid', messages: [user('x')] }, /^max_tokens: /);
  });

  test('a wrong role is 400 naming the field', async () => {
    await expectRefusal({ ...base, messages: [{ role: 'robot', content: 'x' }] }, /^messages\.0\.role: /);
  });

  test('system messages alone are no conversation: 400', async () => {
    await expectRefusal({ ...base, messages: [{ role: 'system', content: 'x' }] }, /^messages: /);
  });

  test('an unknown block type is 400', async () => {
    await expectRefusal(
      { ...base, messages: [{ role: 'user', content: [{ type: 'video' }] }] },
      /^messages\.0\.content\.0\.type: /,
    );
  });

  test('custom tools need a description (spec: custom tool)', async () => {
    await expectRefusal(
      { ...base, tools: [{ name: 'x', input_schema: { type: 'object' } }] },
      /^tools\.0\.description/,
    );
  });

  test("fields the official client types as nullable are unset when null: a custom tool's type, max_uses, max_content_tokens, output_config.format", async () => {
    const tools = [
      { ...strictTool(), strict: false, type: null },
      webSearch({ max_uses: null, allowed_callers: ['direct'] }),
      {
        type: 'web_fetch_20260209',
        name: 'web_fetch',
        max_uses: null,
        max_content_tokens: null,
        allowed_callers: ['direct'],
      },
    ];
    const forced = await send({ ...base, tools, tool_choice: { type: 'tool', name: 'record' } });
    assert.equal(forced.status, 200, JSON.stringify(forced.json));
    assert.deepEqual(
      forced.json.content?.map((block) => [block.type, block.name]),
      [['tool_use', 'record']],
    );
    // A null format is no format: the answer is the plain echo, not JSON.
    const plain = await send({ ...base, output_config: { format: null } });
    assert.equal(plain.status, 200, JSON.stringify(plain.json));
    assert.equal(plain.json.content?.[0]?.text, 'What is the weather?');
  });

  test('a server tool version this service does not run is 400 naming the type and the versions served', async () => {
    await expectRefusal(
      { ...base, tools: [{ type: 'code_execution_20250825', name: 'code_execution' }] },
      /^tools\.0\.type: "code_execution_20250825" is not served here: it runs bash commands .*; the versions of code_execution served are code_execution_20250522, code_execution_20260521$/,
    );
    await expectRefusal(
      { ...base, tools: [{ type: 'web_search_20990101', name: 'web_search' }] },
      /^tools\.0\.type: "web_search_20990101" is not served here: this service does not know that version; the versions of web_search served are web_search_20250305, web_search_20260209, web_search_20260318$/,
    );
  });

  test('max_tokens above the model limit is refused, never clamped', async () => {
    await expectRefusal({ ...base, max_tokens: 4096 }, /max_tokens: 4096 > 2048/);
  });

  test('temperature out of range is 400', async () => {
    await expectRefusal({ ...base, temperature: 1.5 }, /^temperature: /);
  });

  test('system as a string and as text blocks, block content, stop_sequences and sampling fields are accepted', async () => {
    const body = {
      ...base,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      metadata: { user_id: 'u-1' },
    };
    assert.equal((await send(body)).status, 200);
    assert.equal((await send({ ...base, system: 'Be brief.' })).status, 200);
  });

  test('a prompt over the context window is 400 prompt is too long', async () => {
    await expectRefusal(
      { ...base, messages: [user('word '.repeat(5000))] },
      /^prompt is too long: (at least )?\d+ tokens > 4096 maximum/,
    );
  });
});

describe('tool_use and tool_result pairing', () => {
  const tools = [{ name: 'lookup', description: 'Look it up.', input_schema: { type: 'object' } }];
  const call = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] };

  test('a tool_use answered by its tool_result is accepted', async () => {
    const body = {
      ...base,
      tools,
      messages: [
        user('q'),
        call,
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
      ],
    };
    const { status, json } = await send(body);
    assert.equal(status, 200);
    assert.equal(json.content?.[0]?.text, 'sunny');
  });

  test('a tool_use without a tool_result right after is 400 naming the id', async () => {
    await expectRefusal(
      { ...base, tools, messages: [user('q'), call, user('go on')] },
      /tool_use ids were found without tool_result blocks immediately after: toolu_1/,
    );
  });

  test('a tool_result for an unknown id is 400 naming it', async () => {
    const body = {
      ...base,
      tools,
      messages: [
        user('q'),
        call,
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1' },
            { type: 'tool_result', tool_use_id: 'toolu_9' },
          ],
        },
      ],
    };
    await expectRefusal(body, /unexpected tool_use_id found in tool_result blocks: toolu_9/);
  });

  test('a server_tool_use without its result block in the same message is 400 naming the id', async () => {
    const search = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } };
    const result = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] };
    const messages = (content: unknown[]) => [user('q'), { role: 'assistant', content }, user('go on')];
    await expectRefusal(
      { ...base, messages: messages([search]) },
      /messages\.1: server_tool_use ids were found without their result blocks in the same message: srvtoolu_1/,
    );
    assert.equal(
      (await send({ ...base, messages: messages([search, result, { type: 'text', text: 'Found nothing.' }]) })).status,
      200,
    );
  });

  test('two tool_results for one tool_use are 400', async () => {
    const result = { type: 'tool_result', tool_use_id: 'toolu_1' };
    await expectRefusal(
      { ...base, tools, messages: [user('q'), call, { role: 'user', content: [result, result] }] },
      /"toolu_1" has more than one tool_result/,
    );
  });
});

/**
 * Issue 31: a block in the turn it cannot stand in reached the model call's two assertions
 * (call-builder/conversation.ts, "... passed validation") and was a 500 on both routes; each
 * shape is a 400 naming the block now (protocol's block-roles.ts).
 */
describe('blocks in a turn they cannot stand in', () => {
  const ROUTES = ['/v1/messages', '/v1/messages/count_tokens'] as const;
  const tools = [webSearch(), { type: 'web_fetch_20260209', name: 'web_fetch' }];

  async function expectRefusalOn(route: (typeof ROUTES)[number], messages: unknown[], expected: string) {
    const body = { model: 'mid', messages, tools, ...(route === '/v1/messages' ? { max_tokens: 200 } : {}) };
    const response = await postJson(service, route, body);
    const json = (await response.json()) as { error?: { type: string; message: string } };
    assert.equal(response.status, 400, `${route}: ${JSON.stringify(json)}`);
    assert.equal(json.error?.type, 'invalid_request_error');
    assert.equal(json.error?.message, expected, route);
  }

  const serverCalls = [
    { name: 'web_search', input: { query: 'cats' } },
    { name: 'web_fetch', input: { url: 'https://example.com/' } },
    { name: 'code_execution', input: { code: 'print(1)' } },
  ];
  for (const route of ROUTES) {
    test(`${route}: a server_tool_use of every server tool in a user turn is 400, not the user-turn assertion's 500`, async () => {
      for (const call of serverCalls)
        await expectRefusalOn(
          route,
          [
            user('q'),
            { role: 'assistant', content: 'a' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'go' },
                { type: 'server_tool_use', id: 'srvtoolu_1', ...call },
              ],
            },
          ],
          'messages.2.content.1: a server_tool_use block can only appear in an assistant turn',
        );
    });

    test(`${route}: server results, tool_use, redacted and signed thinking in a user turn are 400`, async () => {
      const blocks = [
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
        {
          type: 'web_fetch_tool_result',
          tool_use_id: 'srvtoolu_1',
          content: { type: 'web_fetch_tool_result_error', error_code: 'unavailable' },
        },
        {
          type: 'code_execution_tool_result',
          tool_use_id: 'srvtoolu_1',
          content: { type: 'code_execution_result', stdout: '', stderr: '', return_code: 0, content: [] },
        },
        { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} },
        { type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' },
        // Signed by this service, so that the signature check lets it through as far as the prompt.
        signedThinking(service.signer, 'Let me see.'),
      ];
      for (const block of blocks)
        await expectRefusalOn(
          route,
          [{ role: 'user', content: [block] }],
          `messages.0.content.0: a ${block.type} block can only appear in an assistant turn`,
        );
    });

    test(`${route}: a tool_result, image or document in an assistant turn is 400, not the assistant-turn assertion's 500`, async () => {
      const blocks = [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A note.' } },
      ];
      for (const block of blocks)
        await expectRefusalOn(
          route,
          [user('q'), { role: 'assistant', content: [{ type: 'text', text: 'a' }, block] }, user('go on')],
          `messages.1.content.1: ${block.type === 'image' ? 'an' : 'a'} ${block.type} block can only appear in a user turn`,
        );
    });

    test(`${route}: a server result without its server_tool_use before it is 400 naming its id`, async () => {
      const result = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_9', content: [] };
      await expectRefusalOn(
        route,
        [user('q'), { role: 'assistant', content: [result, { type: 'text', text: 'Found nothing.' }] }, user('go on')],
        'messages.1.content.0: unexpected tool_use_id found in web_search_tool_result blocks: srvtoolu_9. Each web_search_tool_result block must answer a server_tool_use block before it in the same message, once.',
      );
    });
  }
});
