/**
 * The engine kinds' descriptors (issue 33: backends/backend-kinds.ts lists them): each names
 * every config string that looks like a key, a token, a password, a secret or a URL, which the
 * redaction of replies reads; each decides every field of the model call; the config union and
 * the factory come from the list. A kind added to the list without its sample config here does
 * not type check, so it cannot escape these checks.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMessageRequest, type ModelProfile } from '@model-messages/protocol';
import { backendConfig } from '../src/backends/backend-config.js';
import { BACKEND_KINDS, backendKindOf, type BackendType } from '../src/backends/backend-kinds.js';
import { withPlacedDefaults } from '../src/backends/backend-placement.js';
import { createBackend } from '../src/backends/create-backend.js';
import { buildModelPrompt, buildStepCall } from '../src/call-builder/build-model-call.js';
import { configuredSecrets } from '../src/config/configured-secrets.js';
import { serviceConfig } from '../src/config/config-schema.js';

/** A config of each kind, as small as its schema takes. */
const SAMPLES: Record<BackendType, Record<string, unknown>> = {
  scripted: { type: 'scripted' },
  'llama-cpp': { type: 'llama-cpp', model: 'models/tiny.gguf' },
  'messages-upstream': { type: 'messages-upstream', baseURL: 'http://127.0.0.1:9' },
  'openai-compatible': { type: 'openai-compatible', engine: 'vllm', baseURL: 'http://127.0.0.1:9/v1', model: 'm' },
};

/**
 * Field names that hold a credential or an address: ending in key, token, password, secret, URL or
 * URI (`apiKey`, `hfToken`, `baseURL`), or naming the variable that holds one (`apiKeyEnv`).
 * `tokenDelayMs` and `countTokens` are settings, not credentials.
 */
const SECRET_LIKE = /(?:^(?:key|token|password|secret|url|uri)|(?:Key|Token|Password|Secret|Url|URL|Uri|URI))(?:Env)?$/;

const profile: ModelProfile = {
  id: 'kinds',
  tier: 'mid',
  generation: 'older',
  contextWindow: 4096,
  maxOutputTokens: 1024,
  maxTokens: 'refuse',
};

/** Every field of a schema, nested objects' too, by its path, optional and default wrappers undone. */
function fieldPaths(shape: object, prefix = ''): string[] {
  return Object.entries(shape).flatMap(([name, schema]) => {
    const path = `${prefix}${name}`;
    const inner = unwrapped(schema as WrappedSchema);
    return inner.shape === undefined ? [path] : [path, ...fieldPaths(inner.shape, `${path}.`)];
  });
}

interface WrappedSchema {
  def: { innerType?: WrappedSchema };
  shape?: object;
}

function unwrapped(schema: WrappedSchema): WrappedSchema {
  return schema.def.innerType === undefined ? schema : unwrapped(schema.def.innerType);
}

/** The fields of a model call the builder makes, by the paths the kinds decide them by. */
function builtCallFields(): string[] {
  const request = parseMessageRequest({ model: 'kinds', max_tokens: 16, messages: [{ role: 'user', content: 'Hi.' }] });
  const call = buildStepCall(buildModelPrompt(request, profile), request, {
    turnSoFar: [],
    step: 0,
    outputBudget: 16,
    fault: undefined,
  });
  return Object.entries(call).flatMap(([name, value]) =>
    ['sampling', 'thinking', 'passOn'].includes(name)
      ? Object.keys(value as object).map((field) => `${name}.${field}`)
      : [name],
  );
}

describe('backend kinds', () => {
  test('the list is the config union, in its order, and every kind has a sample here', () => {
    assert.deepEqual(
      backendConfig.options.map((option) => option.shape.type.value),
      BACKEND_KINDS.map((kind) => kind.type),
    );
    assert.deepEqual(Object.keys(SAMPLES).sort(), BACKEND_KINDS.map((kind) => kind.type).sort());
  });

  for (const kind of BACKEND_KINDS) {
    describe(kind.type, () => {
      const config = backendConfig.parse(SAMPLES[kind.type]);

      test('every config field named like a key, token, password, secret or URL is a declared secret or address', () => {
        const declared = [
          ...kind.configStrings.secrets,
          ...kind.configStrings.secretVariables,
          ...kind.configStrings.addresses,
        ] as string[];
        const undeclared = fieldPaths(kind.config.shape).filter(
          (path) => SECRET_LIKE.test(path.split('.').at(-1)!) && !declared.includes(path),
        );
        assert.deepEqual(undeclared, []);
        for (const field of declared) assert.ok(field in kind.config.shape, `${field} is no field of the config`);
      });

      test('the redaction of replies takes out what the kind declares', () => {
        const keys: Record<string, string> = {};
        for (const field of kind.configStrings.secrets) keys[field] = `secret-of-${field}-123456`;
        const variables: Record<string, string> = {};
        for (const field of kind.configStrings.secretVariables) variables[field] = `MMS_KINDS_${field.toUpperCase()}`;
        // Two models: a kind may refuse a key and the variable of one together.
        const service = serviceConfig.parse({
          models: [
            { ...profile, id: 'keys', backend: { ...SAMPLES[kind.type], ...keys } },
            { ...profile, id: 'variables', backend: { ...SAMPLES[kind.type], ...variables } },
          ],
        });
        const environment = Object.fromEntries(
          Object.entries(variables).map(([field, variable]) => [variable, `secret-in-${field}-123456`]),
        );
        const { secrets, addresses } = configuredSecrets(service, environment);
        for (const field of kind.configStrings.secrets) assert.ok(secrets.includes(keys[field]!), field);
        for (const field of kind.configStrings.secretVariables)
          assert.ok(secrets.includes(`secret-in-${field}-123456`), field);
        for (const field of kind.configStrings.addresses)
          assert.ok(addresses.includes(SAMPLES[kind.type][field] as string), field);
      });

      test('it decides every field of the model call, with the reason for what it refuses or ignores', () => {
        const uses = kind.callFields(config as never);
        assert.deepEqual(Object.keys(uses).sort(), builtCallFields().sort());
        for (const [field, use] of Object.entries(uses))
          if (use.use !== 'sent') assert.ok(use.reason.length > 10, `${field}: ${use.use} without a reason`);
      });

      test('the factory builds it with its telemetry name', async () => {
        const placed = withPlacedDefaults([config])[0]!;
        const backend = createBackend(placed, {
          configFolder: process.cwd(),
          profile,
          load: 'lazy',
          modelLabel: 'model kinds',
          report: () => undefined,
          warn: undefined,
          now: undefined,
        });
        try {
          assert.equal(backend.telemetryName, backendKindOf(placed).telemetryName(placed));
          assert.equal(backend.telemetryName, kind.telemetryName(config as never));
        } finally {
          await backend.close();
        }
      });
    });
  }
});
