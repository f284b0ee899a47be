/**
 * The request fields the current official clients send, over HTTP on the scripted backend:
 * thinking shown as omitted and sent back, unknown fields refused or (configured) dropped and
 * named, fields refused on purpose with the reason, tool references. docs/compatibility.md has
 * the whole table; packages/server/test/client-request-fields.test.ts what the model is told.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, readSse, scriptedModels, startService, type RunningService } from '@model-messages/testing';

interface Reply {
  content: Array<{ type: string; thinking?: string; signature?: string; text?: string }>;
  error?: { type: string; message: string };
  input_tokens?: number;
}

const base = { model: 'mid', max_tokens: 200, messages: [{ role: 'user', content: 'Hello there' }] };

async function send(
  service: RunningService,
  path: string,
  body: unknown,
): Promise<{ status: number; reply: Reply; headers: Headers }> {
  const response = await postJson(service, path, body);
  return { status: response.status, reply: (await response.json()) as Reply, headers: response.headers };
}

describe('thinking display "omitted"', () => {
  let service: RunningService;
  before(async () => (service = await startService({ models: scriptedModels() })));
  after(() => service.close());

  const thinking = { type: 'adaptive', display: 'omitted' };

  test('the model thinks; the block comes back empty with a signature, and no thinking is streamed', async () => {
    const { status, reply } = await send(service, '/v1/messages', { ...base, thinking });
    assert.equal(status, 200);
    const block = reply.content[0]!;
    assert.equal(block.type, 'thinking');
    assert.equal(block.thinking, '');
    assert.match(block.signature ?? '', /^mms1h\./);

    const events = await readSse(await postJson(service, '/v1/messages', { ...base, thinking, stream: true }));
    const deltas = events.map((event) => (event.data as { delta?: { type: string } }).delta?.type).filter(Boolean);
    assert.ok(deltas.includes('signature_delta'));
    assert.ok(!deltas.includes('thinking_delta'), deltas.join(','));
  });

  test('sent back, it verifies, and the model reads the thinking it had', async () => {
    const omitted = (await send(service, '/v1/messages', { ...base, thinking })).reply.content;
    const shown = (await send(service, '/v1/messages', { ...base, thinking: { type: 'adaptive' } })).reply.content;
    assert.equal(shown[0]?.thinking !== '', true);
    const conversation = (content: Reply['content']) => ({
      model: 'mid',
      messages: [
        ...base.messages,
        {
          role: 'assistant',
          content: content.map(({ type, thinking: text, signature, text: answer }) =>
            type === 'thinking' ? { type, thinking: text, signature } : { type, text: answer },
          ),
        },
        { role: 'user', content: 'And then?' },
      ],
    });
    const counted = await send(service, '/v1/messages/count_tokens', conversation(omitted));
    assert.equal(counted.status, 200, JSON.stringify(counted.reply));
    // The same thinking, shown: the same prompt, so the same count.
    assert.equal(
      counted.reply.input_tokens,
      (await send(service, '/v1/messages/count_tokens', conversation(shown))).reply.input_tokens,
    );

    const forged = omitted.map((block) =>
      block.type === 'thinking'
        ? {
            ...block,
            signature: block.signature!.replace(/\.[A-Za-z0-9_-]+$/, `.${Buffer.from('other').toString('base64url')}`),
          }
        : block,
    );
    const refused = await send(service, '/v1/messages/count_tokens', conversation(forged));
    assert.equal(refused.status, 400);
    assert.match(
      refused.reply.error!.message,
      /^messages\.1\.content\.0: the thinking block's signature does not verify/,
    );
  });
});

describe('unknown fields', () => {
  let refusing: RunningService;
  let ignoring: RunningService;
  before(async () => {
    refusing = await startService({ models: scriptedModels() });
    ignoring = await startService({ models: scriptedModels(), unknownFields: 'ignore' });
  });
  after(async () => {
    await refusing.close();
    await ignoring.close();
  });

  const withUnknown = {
    ...base,
    brand_new_option: true,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello', colour: 'red' }] }],
  };

  test('are a 400 naming the field by default', async () => {
    const { status, reply } = await send(refusing, '/v1/messages', withUnknown);
    assert.equal(status, 400);
    assert.match(
      reply.error!.message,
      /^(brand_new_option|messages\.0\.content\.0\.colour): Extra inputs are not permitted/,
    );
  });

  test('with unknownFields "ignore", are dropped and named in mms-ignored-fields, JSON and stream alike', async () => {
    const { status, headers } = await send(ignoring, '/v1/messages', withUnknown);
    assert.equal(status, 200);
    assert.deepEqual(headers.get('mms-ignored-fields')?.split(', ').sort(), [
      'brand_new_option',
      'messages.0.content.0.colour',
    ]);
    const streamed = await postJson(ignoring, '/v1/messages', { ...withUnknown, stream: true });
    assert.equal(streamed.status, 200);
    assert.match(streamed.headers.get('mms-ignored-fields') ?? '', /brand_new_option/);
    await streamed.text();
    const counted = await postJson(ignoring, '/v1/messages/count_tokens', { ...withUnknown, max_tokens: undefined });
    assert.equal(counted.status, 200);
    assert.match(counted.headers.get('mms-ignored-fields') ?? '', /colour/);
  });

  test('a name the header cannot carry as it is goes percent-encoded', async () => {
    const { headers } = await send(ignoring, '/v1/messages', { ...base, 'naïve,field\n': 1 });
    assert.equal(headers.get('mms-ignored-fields'), 'na%C3%AFve%2Cfield%0A');
  });

  test('fields refused on purpose stay refused, with the reason, whatever the switch', async () => {
    for (const service of [refusing, ignoring]) {
      const { status, reply } = await send(service, '/v1/messages', { ...base, mcp_servers: [] });
      assert.equal(status, 400);
      assert.match(reply.error!.message, /^mcp_servers: not supported: this service does not connect to MCP servers/);
    }
  });

  test('fields accepted and ignored by decision are a 200 under refuse', async () => {
    const { status } = await send(refusing, '/v1/messages', {
      ...base,
      inference_geo: 'eu',
      speed: 'standard',
      cache_control: { type: 'ephemeral' },
      metadata: { user_id: '{"device_id":"x"}' },
    });
    assert.equal(status, 200);
  });
});

describe('tool references', () => {
  let service: RunningService;
  before(async () => (service = await startService({ models: scriptedModels() })));
  after(() => service.close());

  const search = { name: 'ToolSearch', description: 'Find tools.', input_schema: { type: 'object' } };
  const rare = { name: 'rare', description: 'Rarely used.', input_schema: { type: 'object' }, defer_loading: true };
  const conversation = (toolName: string) => ({
    model: 'mid',
    tools: [search, rare],
    messages: [
      { role: 'user', content: 'find a tool' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ToolSearch', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'tool_reference', tool_name: toolName }] },
        ],
      },
    ],
  });

  test('loading a deferred tool puts it into the prompt', async () => {
    const loaded = await send(service, '/v1/messages/count_tokens', conversation('rare'));
    const other = await send(service, '/v1/messages/count_tokens', conversation('ToolSearch'));
    assert.equal(loaded.status, 200);
    assert.ok(loaded.reply.input_tokens! > other.reply.input_tokens!);
  });

  test('a reference to no tool of the request is a 400 naming the block', async () => {
    const { status, reply } = await send(service, '/v1/messages/count_tokens', conversation('missing'));
    assert.equal(status, 400);
    assert.equal(
      reply.error!.message,
      'messages.2.content.0.content.0: tool_reference names "missing", which is not among the tools',
    );
  });
});
