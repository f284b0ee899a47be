/**
 * Conformance with each unmodified official client (0.137 and 1.x): tool use, thinking with tools,
 * typed errors, retries and stream errors.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { MessageCreateParamsNonStreaming, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import {
  assertType,
  BOOKING_TOOL,
  forEachOfficialClient,
  rejection,
  sdkClient,
  useConformanceService,
  WEATHER_TOOL,
  type Envelope,
} from './support.js';

forEachOfficialClient((official) => {
  const conformance = useConformanceService(official);
  const {
    APIError,
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    NotFoundError,
    OverloadedError,
    RateLimitError,
  } = official.errors;

  describe('tool use', () => {
    test('a forced strict tool gives one tool_use block whose input satisfies the schema', async () => {
      const message = await conformance.client.messages.create({
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
      const stream = conformance.client.messages.stream({
        model: 'mid',
        max_tokens: 512,
        tools: [BOOKING_TOOL],
        tool_choice: { type: 'tool', name: 'book_flight' },
        messages: [{ role: 'user', content: 'Book me a flight.' }],
      });
      const partials: string[] = [];
      let lastSnapshot: unknown;
      stream.on('streamEvent', (event) => {
        if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
          partials.push(event.delta.partial_json);
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
      const first = await conformance.client.messages.create({
        model: 'mid',
        max_tokens: 512,
        tools: [WEATHER_TOOL],
        messages,
      });
      assert.equal(first.stop_reason, 'tool_use');
      assert.deepEqual(
        first.content.map((block) => block.type),
        ['text', 'tool_use'],
      );
      const call = first.content[1];
      assertType(call, 'tool_use');
      assert.equal(call.name, 'get_weather');
      assert.deepEqual(call.input, { city: 'Paris', unit: 'celsius' });

      messages.push({ role: 'assistant', content: first.content });
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '21C, sunny' }] });
      const second = await conformance.client.messages.create({
        model: 'mid',
        max_tokens: 512,
        tools: [WEATHER_TOOL],
        messages,
      });
      assert.equal(second.stop_reason, 'end_turn');
      assert.deepEqual(second.content, [
        { type: 'text', text: 'It is 21 degrees and sunny in Paris.', citations: null },
      ]);
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
      const first = await conformance.client.messages
        .stream({
          model: 'mid',
          max_tokens: 512,
          thinking: { type: 'adaptive' },
          tools: [lookup],
          messages,
        })
        .finalMessage();
      assert.equal(first.stop_reason, 'tool_use');
      assert.deepEqual(
        first.content.map((block) => block.type),
        ['thinking', 'tool_use'],
      );
      const [thinking, call] = first.content;
      assertType(thinking, 'thinking');
      assert.ok(thinking.signature.length > 0);
      assertType(call, 'tool_use');
      assert.equal(call.name, 'lookup');
      assert.equal(typeof (call.input as Record<string, unknown>).q, 'string');

      messages.push({ role: 'assistant', content: first.content });
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: call.id, content: 'found 3 cats' }],
      });
      const second = await conformance.client.messages.create({
        model: 'mid',
        max_tokens: 512,
        thinking: { type: 'adaptive' },
        tools: [lookup],
        messages,
      });
      assert.equal(second.stop_reason, 'end_turn');
      assert.deepEqual(
        second.content.map((block) => block.type),
        ['thinking', 'text'],
      );
      const answer = second.content[1];
      assertType(answer, 'text');
      assert.equal(answer.text, 'found 3 cats');
    });
  });

  describe('typed errors', () => {
    const hello: MessageCreateParamsNonStreaming = {
      model: 'mid',
      max_tokens: 32,
      messages: [{ role: 'user', content: 'hello' }],
    };

    test('a wrong API key is an AuthenticationError (401, authentication_error)', async () => {
      const badClient = sdkClient(conformance, { apiKey: 'not-the-right-key' });
      const error = await rejection(badClient.messages.create(hello));
      assert.ok(error instanceof AuthenticationError, `got ${String(error)}`);
      assert.equal(error.status, 401);
      assert.match(String(error.requestID), /^req_/);
      assert.equal(error.headers?.get('request-id'), error.requestID);
      const body = error.error as Envelope;
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'authentication_error');
      assert.equal(body.request_id, error.requestID);
      assert.equal(error.type, 'authentication_error');
    });

    test('a strict schema with maxLength is a BadRequestError (400, invalid_request_error) naming maxLength', async () => {
      const error = await rejection(
        conformance.client.messages.create({
          ...hello,
          tools: [
            {
              name: 'set_title',
              description: 'Sets a title.',
              strict: true,
              input_schema: {
                type: 'object',
                properties: { title: { type: 'string', maxLength: 20 } },
                required: ['title'],
                additionalProperties: false,
              },
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
      const error = await rejection(conformance.client.messages.create({ ...hello, model: 'no-such-model' }));
      assert.ok(error instanceof NotFoundError, `got ${String(error)}`);
      assert.equal(error.status, 404);
      assert.match(String(error.requestID), /^req_/);
      const body = error.error as Envelope;
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'not_found_error');
      assert.match(body.error.message, /no-such-model/);
    });

    test('mms-fault http-429 is a RateLimitError with retry-after', async () => {
      const error = await rejection(
        conformance.client.messages.create(hello, { headers: { 'mms-fault': 'http-429' } }),
      );
      assert.ok(error instanceof RateLimitError, `got ${String(error)}`);
      assert.equal(error.status, 429);
      assert.equal(error.headers?.get('retry-after'), '1');
      assert.match(String(error.requestID), /^req_/);
      const body = error.error as Envelope;
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'rate_limit_error');
    });

    test('mms-fault http-500 is an InternalServerError (500, api_error)', async () => {
      const error = await rejection(
        conformance.client.messages.create(hello, { headers: { 'mms-fault': 'http-500' } }),
      );
      assert.ok(error instanceof InternalServerError, `got ${String(error)}`);
      assert.equal(error.status, 500);
      assert.match(String(error.requestID), /^req_/);
      const body = error.error as Envelope;
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'api_error');
    });

    test('mms-fault http-529 is an OverloadedError (1.x) or InternalServerError (0.137) with status 529', async () => {
      const error = await rejection(
        conformance.client.messages.create(hello, { headers: { 'mms-fault': 'http-529' } }),
      );
      // 1.x throws its OverloadedError, a kind of InternalServerError; 0.137 has none and throws that.
      assert.ok(error instanceof OverloadedError, `got ${String(error)}`);
      assert.ok(error instanceof InternalServerError);
      assert.equal(error.type, 'overloaded_error');
      assert.equal(error.status, 529);
      assert.equal(error.headers?.get('retry-after'), '1');
      assert.match(String(error.requestID), /^req_/);
      const body = error.error as Envelope;
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'overloaded_error');
    });

    test('count_tokens errors are typed too (unknown model -> NotFoundError)', async () => {
      const error = await rejection(
        conformance.client.messages.countTokens({ model: 'no-such-model', messages: hello.messages }),
      );
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
      const retrying = sdkClient(conformance, { maxRetries: 2, fetch: countingFetch });
      const started = Date.now();
      const error = await rejection(
        retrying.messages.create(
          { model: 'mid', max_tokens: 32, messages: [{ role: 'user', content: 'retry me' }] },
          { headers: { 'mms-fault': 'http-529' } },
        ),
      );
      const elapsed = Date.now() - started;

      assert.ok(error instanceof APIError, `got ${String(error)}`);
      assert.equal(error.status, 529);
      assert.equal((error.error as Envelope).error.type, 'overloaded_error');
      assert.equal(attempts.length, 3);
      assert.deepEqual(retryCounts, ['0', '1', '2']);
      assert.ok(
        attempts.every((attempt) => attempt.startsWith('529 req_')),
        attempts.join(', '),
      );
      assert.equal(new Set(attempts).size, 3, 'each attempt gets its own request id');
      assert.equal(`529 ${error.requestID}`, attempts[2]);
      assert.ok(elapsed >= 1900, `two retry-after: 1 waits should take about 2 s, took ${elapsed} ms`);
    });

    test('mms-fault stream-error: the SDK stream rejects with the error event after the first content', async () => {
      const stream = conformance.client.messages.stream(
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
      const stream = await conformance.client.messages.create(
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
});
