/**
 * `output_config.format` on the embedded engine where its schema's own grammar cannot guide the
 * answer: a schema with keywords the grammar cannot express, and tools offered beside the format
 * (node-llama-cpp cannot combine a grammar with functions). Such an answer is held, checked,
 * asked for once more on a failure, and a second failure is a 502: the caller never receives an
 * invalid answer, and usage counts every pass within max_tokens.
 *
 * One random-weight model, loaded once: it favours closing JSON strings and containers (so answers
 * under a grammar end soon), and the end of its turn, so that a free answer ends before the budget
 * (otherwise it is cut by max_tokens, and a cut answer is not checked). Under a grammar the end of
 * the turn can only come once the JSON is complete.
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

const RUNS = 4;

let service: RunningService;
before(async () => {
  const model = await tinyLlamaModel({ logitBias: { ...JSON_CLOSING_BIAS, '<|im_end|>': 4 } });
  service = await startService({
    models: [
      {
        id: 'ending',
        tier: 'mid',
        generation: 'newer',
        contextWindow: 2048,
        maxOutputTokens: 2048,
        // The wrapper `auto` resolves to for this template, named: resolving it costs most of a second.
        backend: { type: 'llama-cpp', model, threads: 1, concurrency: 1, chatWrapper: 'chatML' },
      },
    ],
  });
});
after(() => service.close());

const ajv = new Ajv2020({ strict: false });

interface Reply {
  content?: Array<{ type: string; text?: string }>;
  stop_reason?: string;
  usage?: { output_tokens: number };
  error?: { type: string; message: string };
}

async function send(body: Record<string, unknown>): Promise<{ status: number; code: string | null; reply: Reply }> {
  const response = await postJson(service, '/v1/messages', {
    max_tokens: 200,
    messages: [{ role: 'user', content: 'Fill it in.' }],
    ...body,
  });
  return {
    status: response.status,
    code: response.headers.get('mms-error-code'),
    reply: (await response.json()) as Reply,
  };
}

/** An answer is valid JSON for the schema, or the step is a 502 model_output_invalid: never an invalid 200. */
function assertValidOrRefused(schema: Record<string, unknown>, result: Awaited<ReturnType<typeof send>>): void {
  const { status, code, reply } = result;
  if (status === 502) {
    assert.equal(code, 'model_output_invalid');
    assert.match(reply.error?.message ?? '', /output_config\.format\.schema/);
    return;
  }
  assert.equal(status, 200, JSON.stringify(reply));
  if (reply.stop_reason !== 'end_turn') return;
  const text = reply.content?.find((block) => block.type === 'text')?.text ?? '';
  assert.ok(ajv.validate(schema, JSON.parse(text)), `${text}: ${ajv.errorsText()}`);
}

const tools = [
  {
    name: 'lookup',
    description: 'Look something up.',
    input_schema: { type: 'object', properties: { q: { type: 'string' } } },
  },
];
const pointSchema = {
  type: 'object',
  properties: { x: { type: 'integer' } },
  required: ['x'],
  additionalProperties: false,
};

describe('output_config.format the grammar cannot guide on llama.cpp', () => {
  test('a keyword the grammar cannot express is still checked: a valid answer or a 502, never {} for a required property', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 5 } }, required: ['n'] };
    for (let run = 0; run < RUNS; run += 1) {
      assertValidOrRefused(
        schema,
        await send({ model: 'ending', output_config: { format: { type: 'json_schema', schema } } }),
      );
    }
  });

  test('with tools offered too, the format answer is generated free, checked and asked for once more: not a 500', async () => {
    let answered = 0;
    for (let run = 0; run < RUNS; run += 1) {
      const result = await send({
        model: 'ending',
        tools,
        output_config: { format: { type: 'json_schema', schema: pointSchema } },
      });
      assertValidOrRefused(pointSchema, result);
      if (result.status === 200 && result.reply.stop_reason === 'end_turn') answered += 1;
    }
    // The free answers of random weights are never JSON; the second ask, under the schema's grammar, is.
    assert.ok(answered > 0, 'no run answered with valid JSON');
  });

  test('the second pass gets only what the first left: usage never exceeds max_tokens', async () => {
    for (const max_tokens of [6, 10, 16]) {
      for (let run = 0; run < RUNS; run += 1) {
        const { status, reply } = await send({
          model: 'ending',
          max_tokens,
          tools,
          output_config: { format: { type: 'json_schema', schema: pointSchema } },
        });
        // A first answer that spent the whole budget leaves nothing to ask again with: a 502.
        assert.ok(status === 200 || status === 502, `${status}: ${JSON.stringify(reply)}`);
        if (status === 502) continue;
        const outputTokens = reply.usage?.output_tokens ?? 0;
        assert.ok(outputTokens <= max_tokens, `${outputTokens} output tokens for max_tokens ${max_tokens}`);
        assert.ok(outputTokens > 0);
      }
    }
  });
});
