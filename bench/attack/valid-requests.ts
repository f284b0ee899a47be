/**
 * The valid Messages requests the bad-input fuzz starts from (each is answered 200 by the scripted
 * model `mid` when sent as it is): between them they hold every part of the request a mutation
 * can break: a system prompt, custom and server tools, tool_choice, thinking, output_config,
 * images, documents, tool_use/tool_result turns, stream, sampling fields. No request forces a
 * server tool, so that an unmutated one never starts a sandbox or a fetch.
 */

export interface ValidRequest {
  name: string;
  path: '/v1/messages' | '/v1/messages/count_tokens';
  body: Record<string, unknown>;
}

export const FUZZ_MODEL = 'mid';

/** A 1×1 PNG. */
export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
export const PDF_BASE64 = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
).toString('base64');

const weatherTool = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 40 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
    required: ['city'],
  },
};

const strictTool = {
  name: 'record',
  description: 'Records a person.',
  strict: true,
  input_schema: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
      age: { type: ['integer', 'null'] },
    },
    required: ['name', 'tags', 'age'],
    additionalProperties: false,
  },
};

function conversation(extra: Record<string, unknown>): Record<string, unknown> {
  return { model: FUZZ_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }], ...extra };
}

const MESSAGE_BODIES: Record<string, Record<string, unknown>> = {
  plain: conversation({}),
  'system and sampling': conversation({
    system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral', ttl: '5m' } }],
    stop_sequences: ['STOP'],
    temperature: 0.5,
    top_p: 0.9,
    top_k: 40,
    metadata: { user_id: 'user-1' },
    service_tier: 'auto',
  }),
  'forced custom tool': conversation({
    tools: [weatherTool, strictTool],
    tool_choice: { type: 'tool', name: 'record', disable_parallel_tool_use: true },
  }),
  'tools offered, server tools too': conversation({
    tools: [
      weatherTool,
      { type: 'web_search_20260209', name: 'web_search', max_uses: 1, allowed_domains: ['example.com'] },
      { type: 'web_fetch_20260209', name: 'web_fetch', max_uses: 1, citations: { enabled: true } },
      { type: 'code_execution_20260521', name: 'code_execution' },
    ],
    tool_choice: { type: 'auto' },
  }),
  thinking: conversation({ max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 } }),
  'output format': conversation({
    output_config: {
      format: {
        type: 'json_schema',
        schema: {
          type: 'object',
          properties: { answer: { type: 'string' }, score: { type: 'number' } },
          required: ['answer', 'score'],
          additionalProperties: false,
        },
      },
    },
  }),
  'image and documents': conversation({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A plain document.' } },
          { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'A content document.' }] } },
          { type: 'text', text: 'What do these say?' },
        ],
      },
    ],
  }),
  'tool turns': conversation({
    tools: [weatherTool],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: 'Sunny, 21 C' }] }],
      },
    ],
  }),
  stream: conversation({ stream: true, system: 'You echo.' }),
  // Issue 34: what Claude Code sends besides: its WebSearch's dated tool, tool search over
  // deferred tools, and context edits (triggers far above this prompt: none fires unmutated).
  'claude code dialect': conversation({
    tools: [
      { ...weatherTool, defer_loading: true },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 8, allowed_callers: ['direct'] },
      { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
      { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
    ],
    context_management: {
      edits: [
        { type: 'clear_thinking_20251015', keep: 'all' },
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'input_tokens', value: 100_000 },
          keep: { type: 'tool_uses', value: 3 },
          clear_at_least: { type: 'input_tokens', value: 5_000 },
          exclude_tools: ['web_search'],
          clear_tool_inputs: ['get_weather'],
        },
        { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 150_000 }, instructions: 'Be brief.' },
      ],
    },
  }),
};

/** count_tokens takes the conversation without the fields that only generation has. */
function countTokensBody(body: Record<string, unknown>): Record<string, unknown> {
  const { max_tokens, stream, stop_sequences, temperature, top_p, top_k, metadata, service_tier, ...rest } = body;
  void [max_tokens, stream, stop_sequences, temperature, top_p, top_k, metadata, service_tier];
  return rest;
}

export const VALID_REQUESTS: readonly ValidRequest[] = [
  ...Object.entries(MESSAGE_BODIES).map(([name, body]) => ({ name, path: '/v1/messages' as const, body })),
  ...['plain', 'forced custom tool', 'image and documents', 'tool turns', 'output format', 'claude code dialect'].map(
    (name) => ({
      name: `count_tokens ${name}`,
      path: '/v1/messages/count_tokens' as const,
      body: countTokensBody(MESSAGE_BODIES[name]!),
    }),
  ),
];
