/** The client's structured calls against the real service: shape, every retry layer, guardrails, declines, pre-send checks. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '@model-messages/testing';
import {
  ClientConfigError,
  PreSendError,
  type AttemptInfo,
  type DeclineInfo,
  type RetryInfo,
} from '@model-messages/client';
import { clientFor, CONTEXT_WINDOW, MAX_OUTPUT, recorder, startClientService } from './client-support.js';

const person = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' } },
  required: ['name', 'age'],
  additionalProperties: false,
};
const tool = (input: unknown) => ({ type: 'tool_use', name: 'record_answer', input });
/** With `insufficientData: true` the tool's input is the envelope `{answer: ...}` that admits `Insufficient data` (decision 0010). */
const envelope = (answer: unknown) => tool({ answer });
const script = [
  { when: 'GUARD-ONCE', steps: [[tool({ name: '', age: 30 })], [tool({ name: 'Ada', age: 36 })]] },
  { when: 'GUARD-TWICE', steps: [[tool({ name: '', age: 1 })], [tool({ name: '', age: 2 })]] },
  { when: 'NO-AGE-GIVEN', steps: [[envelope('Insufficient data')]] },
  { when: 'GUARD-THEN-NOTHING', steps: [[envelope({ name: '', age: 3 })], [envelope('Insufficient data')]] },
  { when: 'TEXT-ONLY', steps: [[{ type: 'text', text: 'Insufficient data.' }]] },
  // The retry's last user turn holds the data and the ask, so the script tells them apart.
  { when: 'THINKING-ONLY[\\s\\S]*Answer by calling the tool', steps: [[tool({ name: 'Ada', age: 36 })]] },
  { when: 'THINKING-ONLY', steps: [[{ type: 'thinking', thinking: 'Nothing here fits the schema.' }]] },
];
const nameGiven = (value: { name: string }) => (value.name === '' ? 'name is empty' : undefined);

let service: RunningService;
before(async () => {
  // `slow` streams one token every 25 ms, like a model generating.
  const slow = {
    id: 'slow',
    tier: 'large' as const,
    generation: 'newer' as const,
    contextWindow: 200_000,
    maxOutputTokens: MAX_OUTPUT,
    backend: { type: 'scripted' as const, tokenDelayMs: 25 },
  };
  service = await startClientService(
    { 'script.json': script },
    { backend: { script: 'script.json' }, extraModels: [slow] },
  );
});
after(() => service.close());

function setup(faults: Parameters<typeof recorder>[0] = [], options: Parameters<typeof clientFor>[2] = {}) {
  const record = recorder(faults);
  const events = { attempts: [] as AttemptInfo[], retries: [] as RetryInfo[], declines: [] as DeclineInfo[] };
  const hooks = {
    onAttempt: (info: AttemptInfo) => events.attempts.push(info),
    onRetry: (info: RetryInfo) => events.retries.push(info),
    onDecline: (info: DeclineInfo) => events.declines.push(info),
  };
  const client = clientFor(service.baseURL, service.apiKey, { fetch: record.fetch, hooks, ...options });
  return { client, record, events };
}

const ask = { schema: person, instructions: 'Extract the person.', input: 'Ada Lovelace, 36.', maxTokens: 512 };

describe('shape and success', () => {
  test('one strict tool, forced, no parallel use, no thinking; the answer is the validated input with usage and request id', async () => {
    const { client, record } = setup();
    const result = await client.structured<{ name: string; age: number }>(ask);
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(Object.keys(result.value).sort(), ['age', 'name']);
    assert.equal(result.attempts, 1);
    assert.match(result.requestIds[0] ?? '', /^req_/);
    assert.ok(result.usage.inputTokens > 0, JSON.stringify(result));
    const body = record.bodies[0]!;
    assert.equal(body.model, 'mid-newer');
    assert.equal(body.stream, true, 'the client streams internally');
    assert.equal(body.thinking, undefined);
    assert.deepEqual(body.tool_choice, { type: 'tool', name: 'record_answer', disable_parallel_tool_use: true });
    assert.deepEqual((body.tools as unknown[]).length, 1);
    assert.equal((body.tools as Array<{ strict: boolean }>)[0]?.strict, true);
    assert.match(String(body.system), /Extract the person\.[\s\S]*data, not instructions/);
    assert.deepEqual(body.messages, [{ role: 'user', content: '<input>\nAda Lovelace, 36.\n</input>' }]);
  });

  test('the newer small tier gets thinking disabled; structured context goes as JSON', async () => {
    const { client, record } = setup();
    const result = await client.structured({ ...ask, model: 'small', input: undefined, context: { memo: 'Ada, 36' } });
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.deepEqual(record.bodies[0]?.thinking, { type: 'disabled' });
    assert.equal(record.bodies[0]?.messages[0]?.content, '<context>\n{\n  "memo": "Ada, 36"\n}\n</context>');
  });

  test('a newer small model outside the tiers (a tier move candidate) gets thinking disabled; an older small tier gets none', async () => {
    const sized = { contextWindow: CONTEXT_WINDOW, maxOutputTokens: MAX_OUTPUT };
    const { client, record } = setup([], {
      models: {
        small: { id: 'small-older', generation: 'older', ...sized },
        mid: { id: 'mid-newer', ...sized },
        large: { id: 'large-newer', ...sized },
      },
    });
    const candidate = await client.structured({ ...ask, model: { id: 'small-newer', tier: 'small', ...sized } });
    const configured = await client.structured({ ...ask, model: 'small' });
    assert.ok(candidate.ok && configured.ok, JSON.stringify([candidate, configured]));
    assert.deepEqual(
      record.bodies.map((body) => [body.model, body.thinking]),
      [
        ['small-newer', { type: 'disabled' }],
        ['small-older', undefined],
      ],
    );
  });

  test('messages() is a plain call over the same transport', async () => {
    const { client, record } = setup();
    const result = await client.messages({
      model: 'large',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Say this back.' }],
    });
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.value.content, [{ type: 'text', text: 'Say this back.', citations: null }]);
    assert.equal(record.bodies[0]?.model, 'large-newer');
    assert.equal(record.headers[0]?.['anthropic-version'], '2023-06-01');
    assert.equal(record.headers[0]?.['x-api-key'], service.apiKey);
  });
});

describe('HTTP layer', () => {
  // The client always streams, and the service's stream opens at admission: the backend's
  // injected 500s and 529s reach it as error events before any content (the service's
  // docs/decisions/0015), retried as the statuses were (retry-ladder.ts).
  test('a burst of 500s is retried until it recovers; usage and request ids of every attempt are kept', async () => {
    const { client, events } = setup(['http-500', 'http-500']);
    const result = await client.structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.attempts, 3);
    assert.equal(new Set(result.requestIds).size, 3);
    assert.deepEqual(
      events.attempts.map((attempt) => `${attempt.outcome} ${attempt.status}`),
      ['stream-error undefined', 'stream-error undefined', 'message 200'],
    );
    assert.deepEqual(
      events.retries.map((retry) => retry.layer),
      ['http', 'http'],
    );
    assert.match(events.retries[0]?.reason ?? '', /an api_error event came before any content/);
  });

  test('a 529 waits as long as its retry-after says', async () => {
    const { client, events } = setup(['http-529']);
    const result = await client.structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(events.retries[0]?.delayMs, 1_000);
  });

  test('retries stop when they run out: an http failure naming every attempt', async () => {
    const { client } = setup(() => 'http-500', { maxRetries: 2 });
    const result = await client.structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    // The status the stream had: its 500 came as an event.
    assert.equal(result.status, 200);
    assert.equal(result.errorType, 'api_error');
    assert.equal(result.attempts, 3);
    assert.match(result.message, /no retries left; 3 attempts/);
  });

  test("a deadline that expires mid-retry is a timeout before the caller's deadline", async () => {
    const { client } = setup(() => 'http-529');
    const started = Date.now();
    // retry-after is 1 s: it cannot fit in a 900 ms deadline, so the client reports at once.
    const result = await client.structured({ ...ask, timeoutMs: 900 });
    assert.ok(Date.now() - started < 900, "the client reports before the caller's deadline");
    assert.ok(!result.ok && result.kind === 'timeout', JSON.stringify(result));
    assert.equal(result.phase, 'retry-wait');
    assert.match(result.message, /retry-after/);
    assert.match(result.lastError ?? '', /overloaded_error event before content/);
  });

  test("an error event after content is not retried: an http failure with the event's type", async () => {
    const { client } = setup(['stream-error']);
    const result = await client.structured(ask);
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.errorType, 'api_error');
    assert.equal(result.attempts, 1);
  });

  test('a slow stream outlasts the idle timer while tokens keep coming, and is cut at the deadline', async () => {
    const models = {
      small: 'small-newer',
      mid: 'mid-newer',
      large: { id: 'slow', contextWindow: 200_000, maxOutputTokens: MAX_OUTPUT },
    };
    const slowClient = clientFor(service.baseURL, service.apiKey, { timeouts: { idleMs: 250 }, models });
    const words = Array.from({ length: 30 }, (_, index) => `w${index}`).join(' ');
    const request = { model: 'large', max_tokens: 200, messages: [{ role: 'user' as const, content: words }] };
    const done = await slowClient.messages(request);
    assert.ok(done.ok, JSON.stringify(done));
    assert.equal((done.value.content[0] as { text: string }).text, words);
    const cut = await slowClient.messages(request, { timeoutMs: 500 });
    assert.ok(!cut.ok && cut.kind === 'timeout', JSON.stringify(cut));
    assert.equal(cut.phase, 'deadline');
    assert.ok(cut.usage.inputTokens > 0, 'the usage reported before the cut is kept');
  });

  test("a status outside the ladder is not retried and keeps the service's message", async () => {
    const { client } = setup();
    const result = await client.structured({ ...ask, model: { id: 'no-such-model', tier: 'mid' } });
    assert.ok(!result.ok && result.kind === 'http', JSON.stringify(result));
    assert.equal(result.status, 404);
    assert.equal(result.attempts, 1);
    assert.match(result.message, /not_found_error/);
  });
});

describe('answer layer', () => {
  test('truncated: retried once with max_tokens doubled', async () => {
    const { client, record, events } = setup(['truncate']);
    const result = await client.structured({ ...ask, maxTokens: 512 });
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(
      record.bodies.map((body) => body.max_tokens),
      [512, 1_024],
    );
    assert.deepEqual(record.bodies[1]?.messages, record.bodies[0]?.messages);
    assert.deepEqual(
      events.retries.map((retry) => retry.layer),
      ['answer'],
    );
    assert.equal(client.declineCounts().total, 0, 'truncation is not a decline');
  });

  test('truncated at the model limit: no retry can help, a truncated failure', async () => {
    const { client, record } = setup(() => 'truncate');
    const result = await client.structured({ ...ask, maxTokens: MAX_OUTPUT });
    assert.ok(!result.ok && result.kind === 'truncated', JSON.stringify(result));
    assert.equal(result.maxTokens, MAX_OUTPUT);
    assert.match(result.message, /not retried: max_tokens 4096 is already the model's limit \(4096\)$/);
    assert.equal(record.bodies.length, 1);
  });

  test("the default max_tokens is the tier's output budget within the model's limit (spec, Limits), not the 512 of the spec's example; truncated there, the failure says it cannot grow", async () => {
    const { client, record } = setup(['truncate']);
    const result = await client.structured({ ...ask, maxTokens: undefined });
    assert.deepEqual(
      record.bodies.map((body) => body.max_tokens),
      [MAX_OUTPUT],
    );
    assert.ok(!result.ok && result.kind === 'truncated', JSON.stringify(result));
    assert.match(result.message, /not retried: max_tokens 4096 is already the model's limit \(4096\)$/);
  });

  test("with no maxTokens, a prompt over the budget at the tier's default output is refused before sending, with the arithmetic", async () => {
    // The mid tier keeps 200k of its 1M window: (200,000 - 64,000 - 5,000) x 4 = 524,000 characters.
    const { client, record } = setup();
    const call = client.structured({
      ...ask,
      maxTokens: undefined,
      input: 'x'.repeat(770_000),
      model: { id: 'mid-newer', tier: 'mid', contextWindow: 1_000_000 },
    });
    await assert.rejects(call, (error: unknown) => {
      assert.ok(error instanceof PreSendError, String(error));
      assert.equal(error.code, 'prompt_too_long');
      assert.match(
        error.message,
        /^the prompt has 770\d{3} characters; mid-newer allows 524000 = \(200000 window - 64000 max_tokens - 5000 buffer\) x 4/,
      );
      return true;
    });
    assert.equal(record.bodies.length, 0, 'nothing sent');
  });

  test('shrinkOutputToFit cuts the default max_tokens to what a small window leaves after the prompt and the buffer', async () => {
    // No maxOutputTokens: the mid tier's 64k, capped by the 8k window to three quarters of what
    // it leaves after the buffer, 2,250 (issue 32), which leaves 3,000 characters for the prompt.
    const { client, record } = setup();
    const model = { id: 'mid-newer', tier: 'mid' as const, contextWindow: 8_000 };
    const long = { ...ask, maxTokens: undefined, model, input: 'x'.repeat(4_000) };
    await assert.rejects(
      client.structured(long),
      (error: unknown) =>
        error instanceof PreSendError &&
        /allows 3000 = \(8000 window - 2250 max_tokens - 5000 buffer\) x 4/.test(error.message),
      'without the option the default does not fit this prompt',
    );
    const result = await client.structured({ ...long, shrinkOutputToFit: true });
    assert.ok(result.ok, JSON.stringify(result));
    const body = record.bodies[0]!;
    const promptChars =
      String(body.system).length + String(body.messages[0]?.content).length + JSON.stringify(body.tools).length;
    assert.equal(body.max_tokens, 8_000 - Math.ceil(promptChars / 4) - 5_000);
  });

  test('shrinkOutputToFit with a maxTokens of your own is a ClientConfigError naming both fields; nothing is sent', async () => {
    const { client, record } = setup();
    await assert.rejects(
      client.structured({ ...ask, maxTokens: 512, shrinkOutputToFit: true }),
      (error: unknown) =>
        error instanceof ClientConfigError && /^shrinkOutputToFit: .*maxTokens \(512\) was given/.test(error.message),
    );
    assert.equal(record.bodies.length, 0);
  });

  test('no tool call: the text replayed, a user turn asks for the tool, the tool still forced; one decline', async () => {
    const { client, record, events } = setup(['no-tool-call']);
    const result = await client.structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    const retry = record.bodies[1]!;
    assert.deepEqual(retry.messages.slice(1), [
      { role: 'assistant', content: 'I would rather answer in prose than call a tool.' },
      {
        role: 'user',
        content: 'You answered without calling the tool "record_answer". Call it now, with your answer as its input.',
      },
    ]);
    assert.deepEqual(retry.tool_choice, { type: 'tool', name: 'record_answer', disable_parallel_tool_use: true });
    assert.deepEqual(client.declineCounts(), {
      total: 1,
      byModel: { 'mid-newer': 1 },
      byTool: { record_answer: 1 },
      byModelAndTool: { 'mid-newer': { record_answer: 1 } },
    });
    assert.equal(events.declines.length, 1);
    assert.equal(events.declines[0]?.text, 'I would rather answer in prose than call a tool.');
  });

  test('declined twice: a declined failure, each 2xx counted once', async () => {
    const { client } = setup(() => 'no-tool-call');
    const result = await client.structured({ ...ask, model: 'small', toolName: 'classify' });
    assert.ok(!result.ok && result.kind === 'declined', JSON.stringify(result));
    assert.equal(result.attempts, 2);
    assert.deepEqual(client.declineCounts().byModelAndTool, { 'small-newer': { classify: 2 } });
  });

  test('invalid input: one retry whose error result names the validation error; not a decline', async () => {
    const { client, record } = setup(['invalid-tool-input']);
    const result = await client.structured(ask);
    assert.ok(result.ok, JSON.stringify(result));
    const [call, answer] = record.bodies[1]!.messages.slice(1) as Array<{
      role: string;
      content: Array<Record<string, unknown>>;
    }>;
    assert.equal(call?.role, 'assistant');
    assert.equal(call?.content[0]?.type, 'tool_use');
    assert.equal(answer?.content[0]?.is_error, true);
    assert.match(String(answer?.content[0]?.content), /^The input failed validation: \/\S* must /);
    assert.equal(client.declineCounts().total, 0);
  });

  test('invalid twice: an invalid failure with the violation', async () => {
    const { client } = setup(() => 'invalid-tool-input');
    const result = await client.structured(ask);
    assert.ok(!result.ok && result.kind === 'invalid', JSON.stringify(result));
    assert.match(result.violation, / must /);
    assert.equal(result.attempts, 2);
  });

  test('constraints moved out of the strict schema are enforced on the answer by the client', async () => {
    const { client, record } = setup();
    const schema = { ...person, properties: { ...person.properties, name: { type: 'string', maxLength: 3 } } };
    const result = await client.structured({ ...ask, schema });
    const sent = (record.bodies[0]!.tools as Array<{ input_schema: { properties: { name: unknown } } }>)[0]!
      .input_schema.properties.name;
    assert.deepEqual(sent, { type: 'string', description: 'Constraints: {"maxLength":3}' });
    assert.ok(!result.ok && result.kind === 'invalid', JSON.stringify(result));
    assert.match(result.violation, /\/name must NOT have more than 3 characters/);
  });

  test('inside the Insufficient data envelope too, moved constraints are enforced on the unwrapped answer', async () => {
    const { client, record } = setup();
    const schema = { ...person, properties: { ...person.properties, name: { type: 'string', maxLength: 3 } } };
    const result = await client.structured({ ...ask, schema, insufficientData: true });
    const sent = (
      record.bodies[0]!.tools as Array<{
        input_schema: { properties: { answer: { anyOf: Array<{ properties: { name: unknown } }> } } };
      }>
    )[0]!.input_schema.properties.answer.anyOf[0]!.properties.name;
    assert.deepEqual(sent, { type: 'string', description: 'Constraints: {"maxLength":3}' });
    assert.ok(!result.ok && result.kind === 'invalid', JSON.stringify(result));
    assert.match(result.violation, /\/answer\/name must NOT have more than 3 characters/);
    assert.deepEqual(
      Object.keys(result.input as object).sort(),
      ['age', 'name'],
      'the failure carries the answer unwrapped, not the envelope',
    );
    const replayed = record.bodies[1]!.messages[1]!.content as Array<{ input: Record<string, unknown> }>;
    assert.deepEqual(
      replayed[0]!.input,
      { answer: result.input },
      'the retry replays the call the model made, envelope included',
    );
    let seen: unknown;
    const withFallback = await client.structured({
      ...ask,
      schema,
      insufficientData: true,
      fallback: (failure) => ((seen = failure.kind === 'invalid' ? failure.input : undefined), { name: 'n/a', age: 0 }),
    });
    assert.ok(withFallback.ok && withFallback.source === 'fallback', JSON.stringify(withFallback));
    assert.deepEqual(Object.keys(seen as object).sort(), ['age', 'name'], 'the fallback sees the unwrapped answer');
  });

  test('a decline with only thinking: the retry is a valid conversation that asks for the tool in the last user turn', async () => {
    const { client, record } = setup();
    const result = await client.structured({ ...ask, input: 'THINKING-ONLY' });
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(client.declineCounts().total, 1);
    assert.deepEqual(record.bodies[1]?.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: '<input>\nTHINKING-ONLY\n</input>' },
          { type: 'text', text: 'Answer by calling the tool "record_answer" now, with your answer as its input.' },
        ],
      },
    ]);
  });
});

describe('Insufficient data', () => {
  test('the escape in the tool input is its own outcome: no retry, no decline, no fallback', async () => {
    const { client, record, events } = setup();
    const result = await client.structured({
      ...ask,
      input: 'NO-AGE-GIVEN',
      insufficientData: true,
      fallback: () => ({ name: 'unknown', age: 0 }),
    });
    assert.ok(!result.ok && result.kind === 'insufficient_data', JSON.stringify(result));
    assert.equal(result.text, 'Insufficient data');
    assert.equal(result.attempts, 1);
    assert.equal(record.bodies.length, 1);
    assert.deepEqual(events.retries, []);
    assert.equal(client.declineCounts().total, 0);
    assert.match(String(record.bodies[0]?.system), /call "record_answer" with \{"answer": "Insufficient data"\}/);
  });

  test('a text-only reply of Insufficient data is that outcome only with the envelope; without it (the default) it is a decline like any skipped tool', async () => {
    const opted = setup();
    const insufficient = await opted.client.structured({
      ...ask,
      input: 'TEXT-ONLY',
      insufficientData: true,
      fallback: () => ({ name: 'unknown', age: 0 }),
    });
    assert.ok(!insufficient.ok && insufficient.kind === 'insufficient_data', JSON.stringify(insufficient));
    assert.equal(opted.record.bodies.length, 1);
    assert.equal(opted.client.declineCounts().total, 0);

    // The prompt never allowed it: counted (spec, Client retry policy 4), retried by asking for the tool, answered.
    const plain = setup();
    const declined = await plain.client.structured({
      ...ask,
      input: 'TEXT-ONLY',
      fallback: () => ({ name: 'unknown', age: 0 }),
    });
    assert.ok(declined.ok && declined.source === 'model', JSON.stringify(declined));
    assert.deepEqual(
      (plain.record.bodies[0]?.tools as Array<{ input_schema: unknown }>)[0]?.input_schema,
      person,
      'the schema as given, no envelope',
    );
    assert.deepEqual(plain.record.bodies[1]?.messages.slice(1, 2), [
      { role: 'assistant', content: 'Insufficient data.' },
    ]);
    assert.equal(plain.client.declineCounts().total, 1);
    assert.deepEqual(
      plain.events.declines.map((decline) => decline.text),
      ['Insufficient data.'],
    );
  });

  test('without the envelope, Insufficient data text twice is a declined failure, which the fallback replaces', async () => {
    const { client } = setup([undefined, 'no-tool-call']);
    const result = await client.structured<{ name: string; age: number }>({
      ...ask,
      input: 'TEXT-ONLY',
      fallback: () => ({ name: 'unknown', age: 0 }),
    });
    assert.ok(result.ok && result.source === 'fallback', JSON.stringify(result));
    assert.equal(result.failure?.kind, 'declined');
    assert.equal(client.declineCounts().total, 2);
  });

  test('after a guardrail rejection, Insufficient data still wins over the fallback', async () => {
    const { client } = setup();
    const result = await client.structured<{ name: string; age: number }>({
      ...ask,
      input: 'GUARD-THEN-NOTHING',
      insufficientData: true,
      guardrails: [nameGiven],
      fallback: () => ({ name: 'unknown', age: 0 }),
    });
    assert.ok(!result.ok && result.kind === 'insufficient_data', JSON.stringify(result));
    assert.equal(result.attempts, 2);
  });
});

describe('guardrails and fallback', () => {
  test('a rejected answer is retried once, told why, and the second answer is kept', async () => {
    const { client, record, events } = setup();
    const result = await client.structured<{ name: string; age: number }>({
      ...ask,
      input: 'GUARD-ONCE',
      guardrails: [nameGiven],
    });
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.value, { name: 'Ada', age: 36 });
    assert.equal(result.source, 'model');
    const feedback = record.bodies[1]!.messages.at(-1)!.content as Array<Record<string, unknown>>;
    assert.match(String(feedback[0]?.content), /rejected: name is empty/);
    assert.deepEqual(
      events.retries.map((retry) => retry.layer),
      ['guardrail'],
    );
  });

  test("rejected twice: the fallback's value, with the failure attached; without one, a rejected failure", async () => {
    const { client } = setup();
    const withFallback = await client.structured<{ name: string; age: number }>({
      ...ask,
      input: 'GUARD-TWICE',
      guardrails: [nameGiven],
      fallback: () => ({ name: 'unknown', age: 0 }),
    });
    assert.ok(withFallback.ok, JSON.stringify(withFallback));
    assert.equal(withFallback.source, 'fallback');
    assert.deepEqual(withFallback.value, { name: 'unknown', age: 0 });
    assert.equal(withFallback.failure?.kind, 'rejected');
    assert.equal(withFallback.attempts, 2);
    const without = await client.structured<{ name: string; age: number }>({
      ...ask,
      input: 'GUARD-TWICE',
      guardrails: [nameGiven],
    });
    assert.ok(!without.ok && without.kind === 'rejected', JSON.stringify(without));
    assert.deepEqual(without.reasons, ['name is empty']);
    assert.deepEqual(without.value, { name: '', age: 2 });
  });
});

describe('pre-send checks throw before any byte is sent', () => {
  const strictTool = {
    name: 'emit',
    description: 'd',
    strict: true,
    input_schema: { type: 'object' as const, properties: { n: { type: 'integer' } } },
  };
  const cases: Array<[string, () => Promise<unknown>, RegExp]> = [];

  test('thinking with a forced strict tool, a prefill with tools, a strict keyword, disabled to mid', async () => {
    const { client, record } = setup();
    cases.push(
      [
        'rule 2',
        () =>
          client.messages({
            model: 'mid',
            max_tokens: 10,
            messages: [{ role: 'user', content: 'x' }],
            tools: [strictTool],
            tool_choice: { type: 'tool', name: 'emit' },
            thinking: { type: 'adaptive' },
          }),
        /Rule 2/,
      ],
      [
        'rule 4',
        () =>
          client.messages({
            model: 'mid',
            max_tokens: 10,
            messages: [
              { role: 'user', content: 'x' },
              { role: 'assistant', content: '{' },
            ],
            tools: [strictTool],
          }),
        /Rule 4/,
      ],
      [
        'rule 1',
        () =>
          client.messages({
            model: 'mid',
            max_tokens: 10,
            messages: [{ role: 'user', content: 'x' }],
            tools: [
              { ...strictTool, input_schema: { type: 'object', properties: { n: { type: 'integer', minimum: 0 } } } },
            ],
          }),
        /"minimum"/,
      ],
      [
        'rule 5',
        () =>
          client.messages({
            model: 'mid',
            max_tokens: 10,
            messages: [{ role: 'user', content: 'x' }],
            thinking: { type: 'disabled' },
          }),
        /Rule 5/,
      ],
      ['prompt size', () => client.structured({ ...ask, input: 'x'.repeat(800_000) }), /characters/],
    );
    for (const [name, call, pattern] of cases)
      await assert.rejects(
        call,
        (error: unknown) => error instanceof PreSendError && pattern.test(error.message),
        name,
      );
    await assert.rejects(
      client.messages({ model: 'slow', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
      /model "slow": not a tier nor a configured model \(small-newer, mid-newer, large-newer\)/,
    );
    assert.equal(record.bodies.length, 0);
  });
});
