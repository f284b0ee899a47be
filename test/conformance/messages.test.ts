/**
 * Conformance with each unmodified official client (0.137, which sends anthropic-version
 * 2023-06-01, and 1.x, which sends 2026-10-21): the version header, messages, streams, models,
 * stop reasons.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { MessageCreateParamsNonStreaming, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { API_VERSIONS, VERSION_HEADER } from '@model-messages/protocol';
import {
  assertType,
  forEachOfficialClient,
  MODEL_IDS,
  plainWithoutId,
  rejection,
  sdkClient,
  useConformanceService,
  type Envelope,
} from './support.js';

forEachOfficialClient((official) => {
  const conformance = useConformanceService(official);

  describe('anthropic-version', () => {
    test(`the client sends ${official.apiVersion} as it is, and is answered`, async () => {
      const sentVersions: Array<string | null> = [];
      const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
        sentVersions.push(new Headers(init?.headers).get(VERSION_HEADER));
        return fetch(input, init);
      };
      const client = sdkClient(conformance, { fetch: recordingFetch });
      const message = await client.messages.create({
        model: 'mid',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'which version?' }],
      });
      assert.deepEqual(sentVersions, [official.apiVersion]);
      assert.equal(message.model, 'mid-newer');
      assert.deepEqual(message.content, [{ type: 'text', text: 'which version?', citations: null }]);
    });

    test('any other value is a BadRequestError naming the supported versions', async () => {
      const client = sdkClient(conformance, { defaultHeaders: { [VERSION_HEADER]: '2024-01-01' } });
      const error = await rejection(client.models.retrieve('mid'));
      assert.ok(error instanceof official.errors.BadRequestError, `got ${String(error)}`);
      assert.equal(error.status, 400);
      assert.equal(error.type, 'invalid_request_error');
      const body = error.error as Envelope;
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /"2024-01-01" is not a supported version/);
      for (const version of API_VERSIONS) assert.ok(body.error.message.includes(version), body.error.message);
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
      const message = await conformance.client.messages.create(params);
      assert.match(message.id, /^msg_/);
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.equal(message.model, 'mid-newer');
      assert.deepEqual(message.content, [{ type: 'text', text: 'Hello, conformance suite!', citations: null }]);
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.stop_sequence, null);
      assert.ok(message.usage.input_tokens > 0);
      assert.ok(message.usage.output_tokens > 0);

      const counted = await conformance.client.messages.countTokens({
        model: params.model,
        system: params.system,
        messages: params.messages,
      });
      assert.equal(counted.input_tokens, message.usage.input_tokens);
    });

    test('the request-id header of a success reaches the SDK', async () => {
      const { data, request_id } = await conformance.client.messages
        .create({ model: 'small', max_tokens: 32, messages: [{ role: 'user', content: 'id please' }] })
        .withResponse();
      assert.equal(data.model, 'small-newer');
      assert.match(String(request_id), /^req_/);
    });

    test('output_config json_schema yields text that parses and satisfies the schema', async () => {
      const message = await conformance.client.messages.create({
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
      const json = await conformance.client.messages.create(params);

      const stream = conformance.client.messages.stream(params);
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
      const stream = await conformance.client.messages.create({
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
      assert.deepEqual(
        middle,
        middle.map(() => 'content_block_delta'),
      );

      const start = events[0];
      assertType(start, 'message_start');
      assert.match(start.message.id, /^msg_/);
      assert.equal(start.message.model, 'small-newer');
      assert.deepEqual(start.message.content, []);
      assert.equal(start.message.stop_reason, null);
      const text = events
        .flatMap((event) =>
          event.type === 'content_block_delta' && event.delta.type === 'text_delta' ? [event.delta.text] : [],
        )
        .join('');
      assert.equal(text, 'one two three');
      const delta = events.at(-2);
      assertType(delta, 'message_delta');
      assert.equal(delta.delta.stop_reason, 'end_turn');
      assert.equal(delta.usage.output_tokens, 3);
      assert.equal(delta.usage.input_tokens, start.message.usage.input_tokens);
    });

    test('a thinking stream sends thinking_delta and signature_delta; the thinking block comes first and is signed', async () => {
      const stream = conformance.client.messages.stream({
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
      assert.deepEqual(
        final.content.map((block) => block.type),
        ['thinking', 'text'],
      );
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

  describe('models', () => {
    test('models.list returns the configured ids in order', async () => {
      const ids: string[] = [];
      for await (const model of conformance.client.models.list()) {
        assert.equal(model.type, 'model');
        assert.equal(typeof model.display_name, 'string');
        assert.ok(!Number.isNaN(Date.parse(model.created_at)));
        ids.push(model.id);
      }
      assert.deepEqual(ids, MODEL_IDS);
    });

    test('models.list pages with limit and after_id', async () => {
      const first = await conformance.client.models.list({ limit: 4 });
      assert.deepEqual(
        first.data.map((model) => model.id),
        MODEL_IDS.slice(0, 4),
      );
      assert.equal(first.has_more, true);
      assert.equal(first.hasNextPage(), true);
      const second = await first.getNextPage();
      assert.deepEqual(
        second.data.map((model) => model.id),
        MODEL_IDS.slice(4),
      );
      assert.equal(second.has_more, false);
      assert.equal(second.hasNextPage(), false);
    });

    test("models.retrieve('mid') resolves the alias to mid-newer", async () => {
      const model = await conformance.client.models.retrieve('mid');
      assert.equal(model.id, 'mid-newer');
      assert.equal(model.type, 'model');
    });

    test('models.retrieve of an unknown id is a NotFoundError', async () => {
      const error = await rejection(conformance.client.models.retrieve('nope'));
      assert.ok(error instanceof official.errors.NotFoundError, `got ${String(error)}`);
      assert.equal(error.status, 404);
    });
  });

  describe('stop reasons', () => {
    test('max_tokens truncates the answer with stop_reason max_tokens', async () => {
      const message = await conformance.client.messages.create({
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
      const message = await conformance.client.messages.create({
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
      const final = await conformance.client.messages
        .stream({
          model: 'mid',
          max_tokens: 128,
          stop_sequences: ['STOP'],
          messages: [{ role: 'user', content: 'keep this STOP drop that' }],
        })
        .finalMessage();
      assert.equal(final.stop_reason, 'stop_sequence');
      assert.equal(final.stop_sequence, 'STOP');
      assert.deepEqual(final.content, [{ type: 'text', text: 'keep this ', citations: null }]);
    });
  });
});
