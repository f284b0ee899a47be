import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SCHEMA_LIMITS, type MessageRequest } from '@model-messages/protocol';
import { Client, ClientConfigError, PreSendError } from '@model-messages/client';
import { resolveModel, resolveOptions } from '../src/client-options.js';
import { checkAnswerSchema, checkBeforeSend } from '../src/pre-send-checks.js';
import { buildResearchRequest } from '../src/research/research-request.js';
import { getsThinkingDisabled, proseThinking, withThinkingPolicy } from '../src/thinking-policy.js';
import { buildStructuredRequest } from '../src/structured-request.js';

const mid = resolveModel('mid', { id: 'mid-newer', contextWindow: 1_000_000, maxOutputTokens: 64_000 });
const smallNewer = resolveModel('small', { id: 'small-newer' });
const smallOlder = resolveModel('small', { id: 'small-older', generation: 'older' });
const strictTool = {
  name: 'emit',
  description: 'd',
  strict: true,
  input_schema: { type: 'object' as const, properties: { name: { type: 'string' } } },
};
const base: MessageRequest = { model: 'mid-newer', max_tokens: 512, messages: [{ role: 'user', content: 'hi' }] };
const settings = { bufferTokens: 5_000, checkPromptSize: true };

function refused(request: MessageRequest, code: string, pattern: RegExp, model = mid): void {
  assert.throws(
    () => checkBeforeSend(request, model, settings),
    (error: unknown) => {
      assert.ok(error instanceof PreSendError, String(error));
      assert.equal(error.code, code);
      assert.match(error.message, pattern);
      return true;
    },
  );
}

describe('pre-send checks', () => {
  test('thinking with a forced strict tool (rule 2)', () => {
    refused(
      { ...base, tools: [strictTool], tool_choice: { type: 'tool', name: 'emit' }, thinking: { type: 'adaptive' } },
      'rule_refused',
      /Rule 2/,
    );
  });

  test('a prefill with tools (rule 4)', () => {
    refused(
      {
        ...base,
        tools: [strictTool],
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '{"name":' },
        ],
      },
      'rule_refused',
      /Rule 4/,
    );
  });

  test('a strict schema keyword outside the list (rule 1), naming keyword and path', () => {
    refused(
      {
        ...base,
        tools: [
          { ...strictTool, input_schema: { type: 'object', properties: { name: { type: 'string', maxLength: 3 } } } },
        ],
      },
      'strict_schema_keyword',
      /properties\.name.*"maxLength"/,
    );
  });

  test('disabled thinking to a mid or large model of the newer generation (rule 5)', () => {
    refused({ ...base, thinking: { type: 'disabled' } }, 'rule_refused', /Rule 5/);
    refused({ ...base, model: 'small-older', thinking: { type: 'adaptive' } }, 'rule_refused', /Rule 5/, smallOlder);
  });

  test("a caller's disabled thinking to a mid or large model of either generation is refused, naming tier and model (rule 5, issue 32)", () => {
    for (const [tier, generation] of [
      ['mid', 'older'],
      ['mid', 'newer'],
      ['large', 'older'],
      ['large', 'newer'],
    ] as const) {
      const id = `${tier}-${generation}`;
      refused(
        { ...base, model: id, thinking: { type: 'disabled' } },
        'rule_refused',
        new RegExp(`^Rule 5: thinking "disabled" is never sent to ${id} \\(${tier} tier, ${generation} generation\\)`),
        resolveModel(tier, { id, generation }),
      );
    }
    checkBeforeSend({ ...base, model: 'small-older', thinking: { type: 'disabled' } }, smallOlder, settings);
  });

  test('programmatic calling with a strict tool (rule 3) and max_tokens over the model limit', () => {
    refused(
      { ...base, tools: [strictTool, { type: 'web_search_20260209', name: 'web_search' }] },
      'rule_refused',
      /Rule 3/,
    );
    refused({ ...base, max_tokens: 64_001 }, 'invalid_request', /max_tokens/);
  });

  test('programmatic calling asked for by allowed_callers naming code execution, with a strict tool (rule 3)', () => {
    const searchFromCode = {
      type: 'web_search_20260209' as const,
      name: 'web_search' as const,
      allowed_callers: ['code_execution_20260521' as const],
    };
    refused(
      { ...base, tools: [strictTool, searchFromCode] },
      'rule_refused',
      /^Rule 3: "web_search" has allowed_callers \["code_execution_20260521"\].*strict tool "emit".*\(refused by the client before sending\)$/,
    );
  });

  test('a prompt longer than (window - max_tokens - buffer) x 4 characters', () => {
    // Mid keeps 200k of its 1M: (200,000 - 64,000 - 5,000) x 4 = 524,000 characters.
    checkBeforeSend(
      { ...base, max_tokens: 64_000, messages: [{ role: 'user', content: 'x'.repeat(524_000) }] },
      mid,
      settings,
    );
    refused(
      { ...base, max_tokens: 64_000, messages: [{ role: 'user', content: 'x'.repeat(524_001) }] },
      'prompt_too_long',
      /524001 characters.*524000/,
    );
  });
});

describe('thinking policy, by tier and generation', () => {
  const none = new Set<string>();
  const smallNext = resolveModel('small', { id: 'small-next' });
  const largeOlder = resolveModel('large', { id: 'large-older', generation: 'older' });

  test('any newer small model gets disabled unless the caller asks to think, configured or not', () => {
    for (const model of [smallNewer, smallNext]) {
      assert.deepEqual(
        withThinkingPolicy({ ...base, model: model.id }, model, none).thinking,
        { type: 'disabled' },
        model.id,
      );
      assert.deepEqual(
        withThinkingPolicy({ ...base, model: model.id, thinking: { type: 'adaptive' } }, model, none).thinking,
        { type: 'adaptive' },
      );
    }
  });

  test('mid and large never get disabled, even when listed; prose calls on them get adaptive', () => {
    const listed = new Set(['mid-newer', 'large-older']);
    assert.equal(withThinkingPolicy(base, mid, listed).thinking, undefined);
    assert.equal(withThinkingPolicy({ ...base, model: 'large-older' }, largeOlder, listed).thinking, undefined);
    assert.equal(getsThinkingDisabled(largeOlder, listed), false);
    assert.deepEqual(proseThinking(mid), { type: 'adaptive' });
    assert.deepEqual(proseThinking(largeOlder), { type: 'adaptive' });
  });

  test('an older small model never gets adaptive, and gets disabled only when listed', () => {
    assert.equal(proseThinking(smallOlder), undefined);
    assert.equal(withThinkingPolicy({ ...base, model: 'small-older' }, smallOlder, none).thinking, undefined);
    assert.deepEqual(
      withThinkingPolicy({ ...base, model: 'small-older' }, smallOlder, new Set(['small-older'])).thinking,
      { type: 'disabled' },
    );
  });

  test('research pass 1 thinks adaptively on large, not at all on an older small model, disabled on a newer one', () => {
    const shape = {
      question: 'Why?',
      context: undefined,
      instructions: undefined,
      maxTokens: 1_000,
      webSearchMaxUses: 5,
      webFetchMaxUses: undefined,
      bufferTokens: 5_000,
      thinkingDisabled: none,
    };
    assert.deepEqual(buildResearchRequest({ ...shape, model: resolveModel('large', { id: 'large-newer' }) }).thinking, {
      type: 'adaptive',
    });
    assert.equal(buildResearchRequest({ ...shape, model: smallOlder }).thinking, undefined);
    assert.deepEqual(buildResearchRequest({ ...shape, model: smallNext }).thinking, { type: 'disabled' });
    checkBeforeSend(buildResearchRequest({ ...shape, model: smallOlder }), smallOlder, settings);
  });

  test('the structured call shape: one strict tool, forced, parallel use off, no thinking', () => {
    const shape = {
      schema: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] },
      toolName: 'emit',
      toolDescription: undefined,
      instructions: 'Count.',
      input: 'three',
      maxTokens: 512,
      insufficientData: false,
    };
    const request = buildStructuredRequest({ ...shape, model: mid }, none);
    assert.equal(request.tools?.length, 1);
    assert.deepEqual(request.tools?.[0], {
      name: 'emit',
      description: 'Records the answer. Call it exactly once.',
      strict: true,
      input_schema: {
        type: 'object',
        properties: { n: { type: 'integer', description: 'Constraints: {"minimum":1}' } },
        required: ['n'],
      },
    });
    assert.deepEqual(request.tool_choice, { type: 'tool', name: 'emit', disable_parallel_tool_use: true });
    assert.equal(request.thinking, undefined);
    assert.deepEqual(buildStructuredRequest({ ...shape, model: smallNewer }, none).thinking, { type: 'disabled' });
    checkBeforeSend(buildStructuredRequest({ ...shape, model: smallNewer }, none), smallNewer, settings);
  });

  test('with the Insufficient data escape: the schema inside {answer}, the prompt and the description allow the explicit answer', () => {
    const shape = {
      schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      toolName: 'emit',
      toolDescription: undefined,
      instructions: 'Count.',
      input: 'three',
      maxTokens: 512,
      insufficientData: true,
    };
    const request = buildStructuredRequest({ ...shape, model: mid }, none);
    const tool = request.tools?.[0] as { description: string; input_schema: unknown };
    assert.deepEqual(tool.input_schema, {
      type: 'object',
      properties: {
        answer: {
          anyOf: [
            shape.schema,
            {
              type: 'string',
              enum: ['Insufficient data'],
              description: 'Only when the data does not support an answer.',
            },
          ],
        },
      },
      required: ['answer'],
      additionalProperties: false,
    });
    assert.match(tool.description, /\{"answer": "Insufficient data"\}/);
    assert.match(
      String(request.system),
      /If the data does not support an answer, call "emit" with \{"answer": "Insufficient data"\}/,
    );
    checkBeforeSend(request, mid, settings);
  });
});

describe("the caller's thinking on every call that takes it (issue 32)", () => {
  test('client.messages refuses disabled to an older mid or large model before anything is sent', async () => {
    const sent: string[] = [];
    const client = new Client({
      baseURL: 'http://127.0.0.1:1',
      apiKey: 'k',
      models: {
        small: 'small-newer',
        mid: { id: 'mid-older', generation: 'older' },
        large: { id: 'large-older', generation: 'older' },
      },
      fetch: async (input) => {
        sent.push(String(input));
        throw new Error('nothing may be sent');
      },
    });
    for (const model of ['mid', 'large-older']) {
      await assert.rejects(
        client.messages({ ...base, model, thinking: { type: 'disabled' } }),
        (error: unknown) =>
          error instanceof PreSendError &&
          error.code === 'rule_refused' &&
          /^Rule 5: thinking "disabled" is never sent to (mid|large)-older \((mid|large) tier, older generation\)/.test(
            error.message,
          ),
        model,
      );
    }
    assert.deepEqual(sent, []);
  });
});

describe('thinkingDisabledModels', () => {
  const options = {
    baseURL: 'http://127.0.0.1:1',
    apiKey: 'k',
    models: {
      small: { id: 'small-older', generation: 'older' as const },
      mid: 'mid-newer',
      large: { id: 'large-older', generation: 'older' as const },
    },
  };

  test('adds small models by id; a mid or large model in it is a ClientConfigError, whatever its generation', () => {
    assert.deepEqual(
      [...resolveOptions({ ...options, thinkingDisabledModels: ['small-older'] }).thinkingDisabled],
      ['small-older'],
    );
    assert.throws(
      () => resolveOptions({ ...options, thinkingDisabledModels: ['mid-newer'] }),
      (error: unknown) =>
        error instanceof ClientConfigError &&
        /"mid-newer" is a mid-tier model.*never receive thinking "disabled"/.test(error.message),
    );
    assert.throws(() => resolveOptions({ ...options, thinkingDisabledModels: ['large-older'] }), ClientConfigError);
  });

  test('a model spec passed to a call that contradicts the list is a ClientConfigError', () => {
    const client = new Client({ ...options, thinkingDisabledModels: ['candidate'] });
    assert.equal(client.model({ id: 'candidate', tier: 'small' }).id, 'candidate');
    assert.throws(
      () => client.model({ id: 'candidate', tier: 'mid' }),
      (error: unknown) => error instanceof ClientConfigError && /"candidate" is a mid-tier model/.test(error.message),
    );
  });
});

test('the answer schema is checked before sending: an object root that compiles', () => {
  for (const envelope of [false, true]) {
    assert.throws(
      () => checkAnswerSchema({ type: 'array' }, envelope),
      (error: unknown) => error instanceof PreSendError && /type "object"/.test(error.message),
    );
    assert.throws(
      () => checkAnswerSchema({ type: 'object', properties: { a: { type: 'strnig' } } }, envelope),
      (error: unknown) => error instanceof PreSendError && /not a valid JSON Schema/.test(error.message),
    );
    checkAnswerSchema(
      { type: 'object', properties: { a: { type: 'string', format: 'date', maxLength: 10 } } },
      envelope,
    );
  }
});

describe('the answer schema is checked as sent: the envelope nests it two levels deeper and adds four subschemas', () => {
  /** An object schema `depth` levels deep (the root is level 1). */
  const nested = (depth: number): Record<string, unknown> =>
    depth === 1 ? { type: 'object', properties: {} } : { type: 'object', properties: { child: nested(depth - 1) } };
  const tooDeep = (error: unknown) =>
    error instanceof PreSendError &&
    error.code === 'invalid_request' &&
    /inside the Insufficient data envelope.*nests deeper than 32 levels/.test(error.message);

  test('31 levels pass as given and fail inside the envelope (33); 30 pass both ways', () => {
    checkAnswerSchema(nested(SCHEMA_LIMITS.maxDepth - 1), false);
    assert.throws(() => checkAnswerSchema(nested(SCHEMA_LIMITS.maxDepth - 1), true), tooDeep);
    checkAnswerSchema(nested(SCHEMA_LIMITS.maxDepth - 2), true);
  });

  test("the subschema cap counts the envelope's root, answer, escape and additionalProperties: false", () => {
    // Definitions in groups of at most SCHEMA_LIMITS.maxEntries: the root, one subschema per
    // group, and string definitions for the rest, `subschemas` in all.
    const wide = (subschemas: number) => {
      const groups: Record<string, unknown> = {};
      let left = subschemas - 1;
      for (let group = 0; left > 0; group += 1) {
        const size = Math.min(SCHEMA_LIMITS.maxEntries, left - 1);
        groups[`g${group}`] = {
          $defs: Object.fromEntries(Array.from({ length: size }, (_, index) => [`d${index}`, { type: 'string' }])),
        };
        left -= size + 1;
      }
      return { type: 'object', properties: {}, $defs: groups };
    };
    checkAnswerSchema(wide(SCHEMA_LIMITS.maxSubschemas), false);
    assert.throws(
      () => checkAnswerSchema(wide(SCHEMA_LIMITS.maxSubschemas), true),
      (error: unknown) =>
        error instanceof PreSendError &&
        /inside the Insufficient data envelope.*more than 4096 subschemas/.test(error.message),
    );
    checkAnswerSchema(wide(SCHEMA_LIMITS.maxSubschemas - 4), true);
  });
});
