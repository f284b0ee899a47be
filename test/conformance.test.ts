/**
 * Conformance: the UNMODIFIED official client `@anthropic-ai/sdk`, pointed at the running
 * service, must work as it does against the public Messages API: plain and streamed messages,
 * thinking, tools, typed errors, retries, stream errors, models, and stop reasons.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic, {
  APIError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
} from '@anthropic-ai/sdk';
import AnthropicV1, { BadRequestError as BadRequestErrorV1 } from '@anthropic-ai/sdk-v1';
import type { Message, MessageCreateParamsNonStreaming, MessageParam, RawMessageStreamEvent, Tool } from '@anthropic-ai/sdk/resources/messages';
import { API_VERSION, VERSION_HEADER } from '@mms/protocol';
import { startService, scriptedModels, type RunningService } from '@mms/testing';

/** The version the 1.x official client sends unless told otherwise; the service accepts only API_VERSION. */
const SDK_V1_DEFAULT_VERSION = '2026-10-21';

const MODEL_IDS = ['small-older', 'small-newer', 'mid-older', 'mid-newer', 'large-older', 'large-newer'];

const SCRIPT = [
  {
    when: '^weather in Paris\\?$',
    steps: [
      [
        { type: 'text', text: 'Let me look that up.' },
        { type: 'tool_use', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
      ],
      [{ type: 'text', text: 'It is 21 degrees and sunny in Paris.' }],
    ],
  },
];

const WEATHER_TOOL: Tool = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
    additionalProperties: false,
  },
};

const BOOKING_TOOL: Tool = {
  name: 'book_flight',
  description: 'Books a flight between two airports.',
  strict: true,
  input_schema: {
    type: 'object',
    properties: {
      from: { type: 'string', description: 'IATA code of the departure airport' },
      to: { type: 'string', description: 'IATA code of the arrival airport' },
      passengers: { type: 'integer' },
      cabin: { type: 'string', enum: ['economy', 'business'] },
    },
    required: ['from', 'to', 'passengers', 'cabin'],
    additionalProperties: false,
  },
};

let service: RunningService;
let client: Anthropic;
let scriptFolder: string;

before(async () => {
  scriptFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'mms-'));
  const scriptPath = path.join(scriptFolder, 'script.json');
  fs.writeFileSync(scriptPath, JSON.stringify(SCRIPT));
  service = await startService({ models: scriptedModels({ faults: true, script: scriptPath }) });
  client = sdkClient();
});

after(async () => {
  await service.close();
  fs.rmSync(scriptFolder, { recursive: true, force: true });
});

/** The unmodified SDK, configured only through its public options. */
function sdkClient(options: ConstructorParameters<typeof Anthropic>[0] = {}): Anthropic {
  return new Anthropic({ baseURL: service.baseURL, apiKey: service.apiKey, maxRetries: 0, ...options });
}

/** Resolves with the rejection of `promise`; fails the test when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the call to be rejected');
}

/** The error envelope the SDK keeps on `APIError.error`. */
interface Envelope {
  type: string;
  error: { type: string; message: string };
  request_id: string;
}

/** Asserts the discriminant `type` and narrows to that member of the union. */
function assertType<T extends { type: string }, K extends T['type']>(value: T | undefined, type: K): asserts value is Extract<T, { type: K }> {
  assert.equal(value?.type, type);
}

/** A message as plain JSON (undefined fields dropped), without its id. */
function plainWithoutId(message: Message): Record<string, unknown> {
  const { id: _id, ...rest } = JSON.parse(JSON.stringify(message)) as Record<string, unknown>;
  return rest;
}

describe('official client 1.x', () => {
  test(`unmodified, its default anthropic-version (${SDK_V1_DEFAULT_VERSION}) is refused with a BadRequestError naming ${API_VERSION}`, async () => {
    const v1 = new AnthropicV1({ baseURL: service.baseURL, apiKey: service.apiKey, maxRetries: 0 });
    const error = await rejection(v1.models.retrieve('mid'));
    assert.ok(error instanceof BadRequestErrorV1, `got ${String(error)}`);
    assert.equal(error.status, 400);
    assert.equal(error.type, 'invalid_request_error');
    assert.ok(error.message.includes(SDK_V1_DEFAULT_VERSION) && error.message.includes(API_VERSION), error.message);
    const body = error.error as Envelope;
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, new RegExp(`"${SDK_V1_DEFAULT_VERSION}" is not a supported version.*${API_VERSION}`));
  });

  test(`with defaultHeaders { ${VERSION_HEADER}: ${API_VERSION} } messages.create works`, async () => {
    const v1 = new AnthropicV1({
      baseURL: service.baseURL,
      apiKey: service.apiKey,
      maxRetries: 0,
      defaultHeaders: { [VERSION_HEADER]: API_VERSION },
    });
    const message = await v1.messages.create({ model: 'mid', max_tokens: 64, messages: [{ role: 'user', content: 'hello from 1.x' }] });
    assert.equal(message.model, 'mid-newer');
    assert.equal(message.stop_reason, 'end_turn');
    const block = message.content[0];
    assert.equal(block?.type, 'text');
    assert.equal(block.type === 'text' ? block.text : undefined, 'hello from 1.x');
  });
});

describe('messages.create (JSON)', () => {
  test('an alias resolves, the text is the echo, and usage matches count_tokens', async () => {
    const params: MessageCreateParamsNonStreaming = {
      model: 'mid',
      max_tokens: 256,
      system: 'You repeat things back.',
      messages: [{ role: 'user', content: 'Hello, conformance suite!' }],
    };
    const message = await client.messages.create(params);
    assert.match(message.id, /^msg_/);
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.model, 'mid-newer');
    assert.deepEqual(message.content, [{ type: 'text', text: 'Hello, conformance suite!', citations: null }]);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.stop_sequence, null);
    assert.ok(message.usage.input_tokens > 0);
    assert.ok(message.usage.output_tokens > 0);

    const counted = await client.messages.countTokens({ model: params.model, system: params.system, messages: params.messages });
    assert.equal(counted.input_tokens, message.usage.input_tokens);
  });

  test('the request-id header of a success reaches the SDK', async () => {
    const { data, request_id } = await client.messages
      .create({ model: 'small', max_tokens: 32, messages: [{ role: 'user', content: 'id please' }] })
      .withResponse();
    assert.equal(data.model, 'small-newer');
    assert.match(String(request_id), /^req_/);
  });

  test('output_config json_schema yields text that parses and satisfies the schema', async () => {
    const message = await client.messages.create({
      model: 'large',
      max_tokens: 512,
      messages: [{ role: 'user', content: 'Describe a person.' }],
      output_config: {
        format: {
          type: 'json_schema',
          schema: {
            type: 'object',
            properties: { name: { type: 'string' }, age: { type: 'integer' } },
            required: ['name', 'age'],
            additionalProperties: false,
          },
        },
      },
    });
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.content.length, 1);
    const block = message.content[0];
    assertType(block, 'text');
    const parsed = JSON.parse(block.text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed).sort(), ['age', 'name']);
    assert.equal(typeof parsed.name, 'string');
    assert.ok(Number.isInteger(parsed.age));
  });
});

describe('streaming', () => {
  test('messages.stream emits the text and finalMessage equals the JSON reply apart from the id', async () => {
    const params: MessageCreateParamsNonStreaming = {
      model: 'mid',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Stream me, token by token, please.' }],
    };
    const json = await client.messages.create(params);

    const stream = client.messages.stream(params);
    const deltas: string[] = [];
    let snapshot = '';
    stream.on('text', (delta, textSnapshot) => {
      deltas.push(delta);
      snapshot = textSnapshot;
    });
    const final = await stream.finalMessage();

    assert.ok(deltas.length > 1, `expected several text deltas, got ${deltas.length}`);
    assert.equal(deltas.join(''), 'Stream me, token by token, please.');
    assert.equal(snapshot, 'Stream me, token by token, please.');
    assert.match(final.id, /^msg_/);
    assert.notEqual(final.id, json.id);
    // The helper adds parsed_output (null without a parser) to what the stream carried.
    const { parsed_output: parsedOutput, ...streamed } = final;
    assert.equal(parsedOutput, null);
    assert.deepEqual(plainWithoutId(streamed), plainWithoutId(json));
    assert.match(String(stream.request_id), /^req_/);
  });

  test('messages.create({stream: true}) yields the events in the public order', async () => {
    const stream = await client.messages.create({
      model: 'small',
      max_tokens: 64,
      stream: true,
      messages: [{ role: 'user', content: 'one two three' }],
    });
    const events: RawMessageStreamEvent[] = [];
    for await (const event of stream) events.push(event);

    const types = events.map((event) => event.type);
    assert.equal(types[0], 'message_start');
    assert.equal(types[1], 'content_block_start');
    assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    const middle = types.slice(2, -3);
    assert.ok(middle.length >= 3);
    assert.deepEqual(middle, middle.map(() => 'content_block_delta'));

    const start = events[0];
    assertType(start, 'message_start');
    assert.match(start.message.id, /^msg_/);
    assert.equal(start.message.model, 'small-newer');
    assert.deepEqual(start.message.content, []);
    assert.equal(start.message.stop_reason, null);
    const text = events.flatMap((event) => (event.type === 'content_block_delta' && event.delta.type === 'text_delta' ? [event.delta.text] : [])).join('');
    assert.equal(text, 'one two three');
    const delta = events.at(-2);
    assertType(delta, 'message_delta');
    assert.equal(delta.delta.stop_reason, 'end_turn');
    assert.equal(delta.usage.output_tokens, 3);
    assert.equal(delta.usage.input_tokens, start.message.usage.input_tokens);
  });

  test('a thinking stream sends thinking_delta and signature_delta; the thinking block comes first and is signed', async () => {
    const stream = client.messages.stream({
      model: 'mid',
      max_tokens: 512,
      thinking: { type: 'adaptive' },
      messages: [{ role: 'user', content: 'Think, then answer.' }],
    });
    const deltaTypes: string[] = [];
    const thinkingDeltas: string[] = [];
    const signatures: string[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'content_block_delta') deltaTypes.push(event.delta.type);
    });
    stream.on('thinking', (delta) => thinkingDeltas.push(delta));
    stream.on('signature', (signature) => signatures.push(signature));
    const final = await stream.finalMessage();

    assert.ok(deltaTypes.includes('thinking_delta'));
    assert.ok(deltaTypes.includes('signature_delta'));
    assert.ok(deltaTypes.indexOf('signature_delta') < deltaTypes.indexOf('text_delta'));
    assert.equal(signatures.length, 1);
    assert.deepEqual(final.content.map((block) => block.type), ['thinking', 'text']);
    const [thinking, text] = final.content;
    assertType(thinking, 'thinking');
    assert.ok(thinking.thinking.length > 0);
    assert.equal(thinking.thinking, thinkingDeltas.join(''));
    assert.ok(thinking.signature.length > 0);
    assert.equal(thinking.signature, signatures[0]);
    assertType(text, 'text');
    assert.equal(text.text, 'Think, then answer.');
    assert.equal(final.stop_reason, 'end_turn');
  });
});

describe('tool use', () => {
  test('a forced strict tool gives one tool_use block whose input satisfies the schema', async () => {
    const message = await client.messages.create({
      model: 'large',
      max_tokens: 512,
      tools: [BOOKING_TOOL],
      tool_choice: { type: 'tool', name: 'book_flight' },
      messages: [{ role: 'user', content: 'Book me a flight from LHR to JFK.' }],
    });
    assert.equal(message.stop_reason, 'tool_use');
    assert.equal(message.content.length, 1);
    const block = message.content[0];
    assertType(block, 'tool_use');
    assert.match(block.id, /^toolu_/);
    assert.equal(block.name, 'book_flight');
    const input = block.input as Record<string, unknown>;
    assert.deepEqual(Object.keys(input).sort(), ['cabin', 'from', 'passengers', 'to']);
    assert.equal(typeof input.from, 'string');
    assert.equal(typeof input.to, 'string');
    assert.ok(Number.isInteger(input.passengers));
    assert.ok(['economy', 'business'].includes(input.cabin as string));
  });

  test('streamed tool input arrives as input_json_delta and the final message carries the parsed input', async () => {
    const stream = client.messages.stream({
      model: 'mid',
      max_tokens: 512,
      tools: [BOOKING_TOOL],
      tool_choice: { type: 'tool', name: 'book_flight' },
      messages: [{ role: 'user', content: 'Book me a flight.' }],
    });
    const partials: string[] = [];
    let lastSnapshot: unknown;
    stream.on('streamEvent', (event) => {
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') partials.push(event.delta.partial_json);
    });
    stream.on('inputJson', (_partial, snapshot) => {
      lastSnapshot = snapshot;
    });
    const final = await stream.finalMessage();

    assert.ok(partials.length > 1, `expected several input_json_delta events, got ${partials.length}`);
    assert.equal(final.stop_reason, 'tool_use');
    assert.equal(final.content.length, 1);
    const block = final.content[0];
    assertType(block, 'tool_use');
    const input = block.input as Record<string, unknown>;
    assert.deepEqual(input, JSON.parse(partials.join('')));
    assert.deepEqual(lastSnapshot, input);
    assert.deepEqual(Object.keys(input).sort(), ['cabin', 'from', 'passengers', 'to']);
  });

  test('a scripted two-step turn: tool_use, then the client sends tool_result, then the final text', async () => {
    const messages: MessageParam[] = [{ role: 'user', content: 'weather in Paris?' }];
    const first = await client.messages.create({ model: 'mid', max_tokens: 512, tools: [WEATHER_TOOL], messages });
    assert.equal(first.stop_reason, 'tool_use');
    assert.deepEqual(first.content.map((block) => block.type), ['text', 'tool_use']);
    const call = first.content[1];
    assertType(call, 'tool_use');
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(call.input, { city: 'Paris', unit: 'celsius' });

    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '21C, sunny' }] });
    const second = await client.messages.create({ model: 'mid', max_tokens: 512, tools: [WEATHER_TOOL], messages });
    assert.equal(second.stop_reason, 'end_turn');
    assert.deepEqual(second.content, [{ type: 'text', text: 'It is 21 degrees and sunny in Paris.', citations: null }]);
    assert.ok(second.usage.input_tokens > first.usage.input_tokens);
  });
});

describe('thinking with tools', () => {
  test('a thinking tool call round-trips: the signed thinking block and tool_use go back, the answer echoes the tool result', async () => {
    const lookup: Tool = {
      name: 'lookup',
      description: 'Looks something up.',
      input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    };
    const messages: MessageParam[] = [{ role: 'user', content: 'find cats' }];
    const first = await client.messages
      .stream({ model: 'mid', max_tokens: 512, thinking: { type: 'adaptive' }, tools: [lookup], tool_choice: { type: 'any' }, messages })
      .finalMessage();
    assert.equal(first.stop_reason, 'tool_use');
    assert.deepEqual(first.content.map((block) => block.type), ['thinking', 'tool_use']);
    const [thinking, call] = first.content;
    assertType(thinking, 'thinking');
    assert.ok(thinking.signature.length > 0);
    assertType(call, 'tool_use');
    assert.equal(call.name, 'lookup');
    assert.equal(typeof (call.input as Record<string, unknown>).q, 'string');

    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'found 3 cats' }] });
    const second = await client.messages.create({ model: 'mid', max_tokens: 512, thinking: { type: 'adaptive' }, tools: [lookup], messages });
    assert.equal(second.stop_reason, 'end_turn');
    assert.deepEqual(second.content.map((block) => block.type), ['thinking', 'text']);
    const answer = second.content[1];
    assertType(answer, 'text');
    assert.equal(answer.text, 'found 3 cats');
  });
});

describe('typed errors', () => {
  const hello: MessageCreateParamsNonStreaming = { model: 'mid', max_tokens: 32, messages: [{ role: 'user', content: 'hello' }] };

  test('a wrong API key is an AuthenticationError (401, authentication_error)', async () => {
    const badClient = sdkClient({ apiKey: 'not-the-right-key' });
    const error = await rejection(badClient.messages.create(hello));
    assert.ok(error instanceof AuthenticationError, `got ${String(error)}`);
    assert.equal(error.status, 401);
    assert.match(String(error.requestID), /^req_/);
    assert.equal(error.headers.get('request-id'), error.requestID);
    const body = error.error as Envelope;
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'authentication_error');
    assert.equal(body.request_id, error.requestID);
    assert.equal(error.type, 'authentication_error');
  });

  test('a strict schema with maxLength is a BadRequestError (400, invalid_request_error) naming maxLength', async () => {
    const error = await rejection(
      client.messages.create({
        ...hello,
        tools: [
          {
            name: 'set_title',
            description: 'Sets a title.',
            strict: true,
            input_schema: { type: 'object', properties: { title: { type: 'string', maxLength: 20 } }, required: ['title'], additionalProperties: false },
          },
        ],
      }),
    );
    assert.ok(error instanceof BadRequestError, `got ${String(error)}`);
    assert.equal(error.status, 400);
    assert.match(String(error.requestID), /^req_/);
    const body = error.error as Envelope;
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /maxLength/);
    assert.match(error.message, /maxLength/);
    assert.equal(error.type, 'invalid_request_error');
  });

  test('an unknown model is a NotFoundError (404, not_found_error)', async () => {
    const error = await rejection(client.messages.create({ ...hello, model: 'no-such-model' }));
    assert.ok(error instanceof NotFoundError, `got ${String(error)}`);
    assert.equal(error.status, 404);
    assert.match(String(error.requestID), /^req_/);
    const body = error.error as Envelope;
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'not_found_error');
    assert.match(body.error.message, /no-such-model/);
  });

  test('mms-fault http-429 is a RateLimitError with retry-after', async () => {
    const error = await rejection(client.messages.create(hello, { headers: { 'mms-fault': 'http-429' } }));
    assert.ok(error instanceof RateLimitError, `got ${String(error)}`);
    assert.equal(error.status, 429);
    assert.equal(error.headers.get('retry-after'), '1');
    assert.match(String(error.requestID), /^req_/);
    const body = error.error as Envelope;
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'rate_limit_error');
  });

  test('mms-fault http-500 is an InternalServerError (500, api_error)', async () => {
    const error = await rejection(client.messages.create(hello, { headers: { 'mms-fault': 'http-500' } }));
    assert.ok(error instanceof InternalServerError, `got ${String(error)}`);
    assert.equal(error.status, 500);
    assert.match(String(error.requestID), /^req_/);
    const body = error.error as Envelope;
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'api_error');
  });

  test('mms-fault http-529 is an APIError with status 529 (overloaded_error)', async () => {
    const error = await rejection(client.messages.create(hello, { headers: { 'mms-fault': 'http-529' } }));
    // 0.137.0 has no OverloadedError; it maps every status >= 500 to InternalServerError.
    assert.ok(error instanceof APIError, `got ${String(error)}`);
    assert.ok(error instanceof InternalServerError);
    assert.equal(error.type, 'overloaded_error');
    assert.equal(error.status, 529);
    assert.equal(error.headers.get('retry-after'), '1');
    assert.match(String(error.requestID), /^req_/);
    const body = error.error as Envelope;
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'overloaded_error');
  });

  test('count_tokens errors are typed too (unknown model -> NotFoundError)', async () => {
    const error = await rejection(client.messages.countTokens({ model: 'no-such-model', messages: hello.messages }));
    assert.ok(error instanceof NotFoundError, `got ${String(error)}`);
    assert.equal(error.status, 404);
  });
});

describe('SDK behaviour against the service', () => {
  test('with maxRetries 2 the SDK retries a 529 twice, honouring retry-after, then throws a 529 APIError', async () => {
    const attempts: string[] = [];
    const retryCounts: Array<string | null> = [];
    const countingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      retryCounts.push(new Headers(init?.headers).get('x-stainless-retry-count'));
      const response = await fetch(input, init);
      attempts.push(`${response.status} ${response.headers.get('request-id')}`);
      return response;
    };
    const retrying = sdkClient({ maxRetries: 2, fetch: countingFetch });
    const started = Date.now();
    const error = await rejection(
      retrying.messages.create({ model: 'mid', max_tokens: 32, messages: [{ role: 'user', content: 'retry me' }] }, { headers: { 'mms-fault': 'http-529' } }),
    );
    const elapsed = Date.now() - started;

    assert.ok(error instanceof APIError, `got ${String(error)}`);
    assert.equal(error.status, 529);
    assert.equal((error.error as Envelope).error.type, 'overloaded_error');
    assert.equal(attempts.length, 3);
    assert.deepEqual(retryCounts, ['0', '1', '2']);
    assert.ok(attempts.every((attempt) => attempt.startsWith('529 req_')), attempts.join(', '));
    assert.equal(new Set(attempts).size, 3, 'each attempt gets its own request id');
    assert.equal(`529 ${error.requestID}`, attempts[2]);
    assert.ok(elapsed >= 1900, `two retry-after: 1 waits should take about 2 s, took ${elapsed} ms`);
  });

  test('mms-fault stream-error: the SDK stream rejects with the error event after the first content', async () => {
    const stream = client.messages.stream(
      { model: 'mid', max_tokens: 64, messages: [{ role: 'user', content: 'this stream will break' }] },
      { headers: { 'mms-fault': 'stream-error' } },
    );
    const texts: string[] = [];
    const eventTypes: string[] = [];
    stream.on('text', (delta) => texts.push(delta));
    stream.on('streamEvent', (event) => eventTypes.push(event.type));
    const error = await rejection(stream.finalMessage());

    assert.ok(error instanceof APIError, `got ${String(error)}`);
    assert.equal(error.status, undefined);
    assert.equal(error.type, 'api_error');
    const body = error.error as Envelope;
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'api_error');
    assert.match(body.error.message, /stream-error/);
    assert.match(String(error.requestID), /^req_/);
    assert.deepEqual(texts, ['this']);
    assert.deepEqual(eventTypes, ['message_start', 'content_block_start', 'content_block_delta']);
    assert.ok(!eventTypes.includes('message_stop'));
  });

  test('mms-fault stream-error with messages.create({stream: true}): iteration throws, no message_stop', async () => {
    const stream = await client.messages.create(
      { model: 'small', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'break here' }] },
      { headers: { 'mms-fault': 'stream-error' } },
    );
    const seen: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const event of stream) seen.push(event.type);
      })(),
    );
    assert.ok(error instanceof APIError, `got ${String(error)}`);
    assert.equal(error.type, 'api_error');
    assert.deepEqual(seen, ['message_start', 'content_block_start', 'content_block_delta']);
  });
});

describe('models', () => {
  test('models.list returns the configured ids in order', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      assert.equal(model.type, 'model');
      assert.equal(typeof model.display_name, 'string');
      assert.ok(!Number.isNaN(Date.parse(model.created_at)));
      ids.push(model.id);
    }
    assert.deepEqual(ids, MODEL_IDS);
  });

  test('models.list pages with limit and after_id', async () => {
    const first = await client.models.list({ limit: 4 });
    assert.deepEqual(first.data.map((model) => model.id), MODEL_IDS.slice(0, 4));
    assert.equal(first.has_more, true);
    assert.equal(first.hasNextPage(), true);
    const second = await first.getNextPage();
    assert.deepEqual(second.data.map((model) => model.id), MODEL_IDS.slice(4));
    assert.equal(second.has_more, false);
    assert.equal(second.hasNextPage(), false);
  });

  test("models.retrieve('mid') resolves the alias to mid-newer", async () => {
    const model = await client.models.retrieve('mid');
    assert.equal(model.id, 'mid-newer');
    assert.equal(model.type, 'model');
  });

  test('models.retrieve of an unknown id is a NotFoundError', async () => {
    const error = await rejection(client.models.retrieve('nope'));
    assert.ok(error instanceof NotFoundError, `got ${String(error)}`);
    assert.equal(error.status, 404);
  });
});

describe('stop reasons', () => {
  test('max_tokens truncates the answer with stop_reason max_tokens', async () => {
    const message = await client.messages.create({
      model: 'mid',
      max_tokens: 3,
      messages: [{ role: 'user', content: 'alpha beta gamma delta epsilon zeta' }],
    });
    assert.equal(message.stop_reason, 'max_tokens');
    assert.equal(message.stop_sequence, null);
    assert.equal(message.usage.output_tokens, 3);
    assert.deepEqual(message.content, [{ type: 'text', text: 'alpha beta gamma', citations: null }]);
  });

  test('a stop sequence ends the answer before it and is echoed as stop_sequence', async () => {
    const message = await client.messages.create({
      model: 'mid',
      max_tokens: 128,
      stop_sequences: ['STOP', 'never-seen'],
      messages: [{ role: 'user', content: 'keep this STOP drop that' }],
    });
    assert.equal(message.stop_reason, 'stop_sequence');
    assert.equal(message.stop_sequence, 'STOP');
    assert.deepEqual(message.content, [{ type: 'text', text: 'keep this ', citations: null }]);
  });

  test('a streamed stop sequence reports the same stop_reason and stop_sequence', async () => {
    const final = await client.messages
      .stream({ model: 'mid', max_tokens: 128, stop_sequences: ['STOP'], messages: [{ role: 'user', content: 'keep this STOP drop that' }] })
      .finalMessage();
    assert.equal(final.stop_reason, 'stop_sequence');
    assert.equal(final.stop_sequence, 'STOP');
    assert.deepEqual(final.content, [{ type: 'text', text: 'keep this ', citations: null }]);
  });
});
