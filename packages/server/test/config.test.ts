/** The config file: validation errors that name the field, defaults, and the published schema. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, ModelRegistry, validateConfig } from '@model-messages/server';
import { tinyLlamaModel } from '@model-messages/testing';
import { PUBLISHED_SCHEMAS, renderSchema } from '../../../scripts/published-schemas.js';

const model = {
  id: 'm',
  tier: 'mid',
  generation: 'newer',
  contextWindow: 1000,
  maxOutputTokens: 100,
  backend: { type: 'scripted' },
};

function configError(input: unknown): string {
  try {
    validateConfig(input, 'test.json');
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.message;
  }
  throw new Error('expected a ConfigError');
}

test('a valid config gets its defaults', () => {
  const config = validateConfig({ models: [model] }, 'test.json');
  assert.deepEqual(config.listen, {
    host: '127.0.0.1',
    port: 8080,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 60_000,
    keepAliveTimeoutMs: 72_000,
    writeTimeoutMs: 30_000,
  });
  assert.deepEqual(config.models[0]?.aliases, []);
  assert.equal(config.models[0]?.backend?.concurrency, 16);
});

test('a backends list is admitted by its first backend; a fallback that sets concurrency or queue is refused, naming the field', () => {
  const list = (backends: unknown[]) => ({ ...model, backend: undefined, backends });
  const config = validateConfig(
    { models: [list([{ type: 'scripted', concurrency: 3, queue: 5 }, { type: 'scripted' }])] },
    'test.json',
  );
  assert.deepEqual(
    config.models[0]?.backends?.map((backend) => [backend.type, backend.concurrency, backend.queue]),
    [
      ['scripted', 3, 5],
      ['scripted', 3, 5],
    ],
  );
  assert.match(
    configError({ models: [list([{ type: 'scripted' }, { type: 'scripted', concurrency: 4 }])] }),
    /models\.0\.backends\.1\.concurrency: a fallback is admitted with its list: set concurrency on the first backend/,
  );
  assert.match(
    configError({ models: [list([{ type: 'scripted' }, { type: 'scripted' }, { type: 'scripted', queue: 0 }])] }),
    /models\.0\.backends\.2\.queue: a fallback is admitted with its list/,
  );
  // A lone llama-cpp backend keeps its own default of one sequence.
  assert.equal(
    validateConfig({ models: [{ ...model, backend: { type: 'llama-cpp', model: 'tiny.gguf' } }] }, 'test.json')
      .models[0]?.backend?.concurrency,
    1,
  );
});

test("a llama-cpp fallback keeps its own concurrency (its context sequences, default 1), not the list's; its queue is refused", () => {
  const list = (backends: unknown[]) => ({ ...model, backend: undefined, backends });
  const engine = { type: 'openai-compatible', engine: 'vllm', baseURL: 'http://10.0.0.5:8000/v1', model: 'm' };
  const sequences = (backends: unknown[]) =>
    validateConfig({ models: [list(backends)] }, 'test.json').models[0]!.backends!.map((backend) => [
      backend.type,
      backend.concurrency,
    ]);
  // With the defaults the list admits 16 at once; the llama-cpp fallback still makes one sequence, not 16 full contexts.
  assert.deepEqual(sequences([engine, { type: 'llama-cpp', model: 'tiny.gguf' }]), [
    ['openai-compatible', 16],
    ['llama-cpp', 1],
  ]);
  assert.deepEqual(sequences([engine, { type: 'llama-cpp', model: 'tiny.gguf', concurrency: 2 }]), [
    ['openai-compatible', 16],
    ['llama-cpp', 2],
  ]);
  // A llama-cpp primary's concurrency is both the list's admission and its own sequences.
  assert.deepEqual(sequences([{ type: 'llama-cpp', model: 'tiny.gguf', concurrency: 3 }, engine]), [
    ['llama-cpp', 3],
    ['openai-compatible', 3],
  ]);
  assert.match(
    configError({ models: [list([engine, { type: 'llama-cpp', model: 'tiny.gguf', queue: 4 }])] }),
    /models\.0\.backends\.1\.queue: a fallback is admitted with its list/,
  );
});

test('firstByteTimeoutMs defaults to 30 s for a remote backend with a fallback after it, 120 s alone or last', () => {
  const engine = { type: 'openai-compatible', engine: 'vllm', baseURL: 'http://10.0.0.5:8000/v1', model: 'm' };
  const upstream = { type: 'messages-upstream', baseURL: 'http://10.0.0.7:8080' };
  const timeouts = (input: Record<string, unknown>) =>
    validateConfig({ models: [{ ...model, backend: undefined, ...input }] }, 'test.json').models[0]!;
  const listed = timeouts({
    backends: [engine, upstream, { ...engine, firstByteTimeoutMs: 5_000 }, upstream],
  }).backends!;
  assert.deepEqual(
    listed.map((backend) => ('firstByteTimeoutMs' in backend ? backend.firstByteTimeoutMs : undefined)),
    [30_000, 30_000, 5_000, 120_000],
  );
  const alone = timeouts({ backend: engine }).backend!;
  assert.equal('firstByteTimeoutMs' in alone ? alone.firstByteTimeoutMs : undefined, 120_000);
});

test('maxTokensField and streamOptions are for the generic engine only', () => {
  const engine = (kind: string, extra: Record<string, unknown>) => ({
    models: [
      {
        ...model,
        backend: { type: 'openai-compatible', engine: kind, baseURL: 'http://10.0.0.5:8000/v1', model: 'm', ...extra },
      },
    ],
  });
  const generic = validateConfig(
    engine('generic', { maxTokensField: 'max_completion_tokens', streamOptions: false }),
    'test.json',
  ).models[0]!.backend!;
  assert.deepEqual(generic.type === 'openai-compatible' ? [generic.maxTokensField, generic.streamOptions] : [], [
    'max_completion_tokens',
    false,
  ]);
  assert.match(
    configError(engine('vllm', { maxTokensField: 'max_completion_tokens' })),
    /models\.0\.backend\.maxTokensField: only for engine "generic"/,
  );
  assert.match(
    configError(engine('ollama', { streamOptions: false })),
    /models\.0\.backend\.streamOptions: only for engine "generic"/,
  );
  assert.match(
    configError(engine('generic', { maxTokensField: 'max_output_tokens' })),
    /models\.0\.backend\.maxTokensField/,
  );
});

test('errors name the file and the field', () => {
  assert.match(configError({ models: [{ ...model, tier: 'huge' }] }), /^config test\.json: models\.0\.tier: /);
  assert.match(
    configError({ models: [{ ...model, backend: { type: 'warp' } }] }),
    /^config test\.json: models\.0\.backend\.type: /,
  );
  assert.match(configError({ models: [model], listen: { port: 70000 } }), /listen\.port/);
  assert.match(configError({ models: [model], colour: 'red' }), /colour: Extra inputs are not permitted/);
  assert.match(configError({ models: [] }), /^config test\.json: models: /);
});

test('code execution: the wall-clock limit is optional and may not be shorter than the running time it includes', () => {
  assert.equal(validateConfig({ models: [model] }, 'test.json').serverTools.codeExecution.wallTimeoutMs, undefined);
  assert.equal(
    validateConfig(
      { models: [model], serverTools: { codeExecution: { timeoutMs: 1000, wallTimeoutMs: 5000 } } },
      'test.json',
    ).serverTools.codeExecution.wallTimeoutMs,
    5000,
  );
  assert.match(
    configError({ models: [model], serverTools: { codeExecution: { timeoutMs: 1000, wallTimeoutMs: 500 } } }),
    /serverTools\.codeExecution\.wallTimeoutMs: must be at least timeoutMs/,
  );
});

test('a name that resolves to two models is refused', () => {
  assert.match(configError({ models: [model, { ...model, id: 'n', aliases: ['m'] }] }), /"m" names both m and n/);
});

test('alias patterns: a catch-all and overlapping patterns are allowed, one given twice is refused naming both places', () => {
  const patterns = (first: string[], second: string[]) => ({
    models: [
      { ...model, aliases: first },
      { ...model, id: 'n', aliases: second },
    ],
  });
  assert.deepEqual(validateConfig(patterns(['*'], ['claude-*', '*haiku*']), 'test.json').models[0]?.aliases, ['*']);
  assert.equal(
    configError(patterns(['mid', 'claude-*'], ['haiku', 'claude-*'])),
    'config test.json: models.1.aliases.1: the pattern "claude-*" (model n) is already given at models.0.aliases.1 ("claude-*", model m); give each pattern once',
  );
  // A run of stars is one star, so "claude-**" is "claude-*" again; within one model too.
  assert.match(
    configError(patterns(['claude-*', 'claude-**'], [])),
    /^config test\.json: models\.0\.aliases\.1: the pattern "claude-\*\*" \(model m\) is already given at models\.0\.aliases\.0 \("claude-\*", model m\)/,
  );
  assert.match(configError(patterns(['*'], ['**'])), /models\.1\.aliases\.0: the pattern "\*\*"/);
  // An exact alias is no pattern: it may be given beside one that matches it, and two exact ones still clash.
  assert.equal(validateConfig(patterns(['claude-*'], ['claude-opus']), 'test.json').models.length, 2);
  assert.match(configError(patterns(['opus'], ['opus'])), /models: "opus" names both m and n/);
});

test('listAs: exact ids a model is listed as, each a name of its own, never a pattern (issue 34)', () => {
  const listed = (first: Record<string, unknown>, second: Record<string, unknown> = {}) => ({
    models: [
      { ...model, ...first },
      { ...model, id: 'n', ...second },
    ],
  });
  assert.deepEqual(validateConfig(listed({ listAs: ['claude-house', 'm'] }), 'test.json').models[0]?.listAs, [
    'claude-house',
    'm',
  ]);
  assert.match(configError(listed({ listAs: ['claude-*'] })), /models\.0\.listAs\.0: must be an exact id, without \*/);
  assert.match(configError(listed({ listAs: [] })), /^config test\.json: models\.0\.listAs: /);
  assert.match(
    configError(listed({ listAs: ['claude-house'] }, { aliases: ['claude-house'] })),
    /"claude-house" names both m and n/,
  );
});

test('maxTokens is refuse unless the model says clamp', () => {
  const config = validateConfig({ models: [model, { ...model, id: 'n', maxTokens: 'clamp' }] }, 'test.json');
  assert.deepEqual(
    config.models.map((entry) => entry.maxTokens),
    ['refuse', 'clamp'],
  );
  assert.match(
    configError({ models: [{ ...model, maxTokens: 'lower' }] }),
    /^config test\.json: models\.0\.maxTokens: /,
  );
});

test("a model's maxOutputTokens above its contextWindow is refused, naming the field; equal is allowed (issue 32)", () => {
  assert.equal(
    configError({ models: [model, { ...model, id: 'n', contextWindow: 32_768, maxOutputTokens: 64_000 }] }),
    'config test.json: models.1.maxOutputTokens: 64000 is more than contextWindow (32768); output shares the window with the prompt',
  );
  const config = validateConfig({ models: [{ ...model, contextWindow: 8_192, maxOutputTokens: 8_192 }] }, 'test.json');
  assert.equal(config.models[0]?.maxOutputTokens, 8_192);
});

test('overrides from the command line and MMS_API_KEYS are applied', () => {
  const config = validateConfig({ models: [model], apiKeys: ['file-key-1234'] }, 'test.json', {
    host: '0.0.0.0',
    port: 9000,
    apiKeys: ['env-key-12345', 'file-key-1234'],
  });
  assert.deepEqual([config.listen.host, config.listen.port], ['0.0.0.0', 9000]);
  assert.deepEqual(config.apiKeys, ['file-key-1234', 'env-key-12345']);
});

test('a config file that is not JSON, or missing, is a ConfigError naming it', () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-config-'));
  const path = join(folder, 'broken.json');
  writeFileSync(path, '{ models: ');
  assert.throws(
    () => loadConfig(path),
    (error: Error) => error instanceof ConfigError && error.message.includes('broken.json: not valid JSON'),
  );
  assert.throws(
    () => loadConfig(join(folder, 'absent.json')),
    (error: Error) => error instanceof ConfigError && /absent\.json: cannot read it \(ENOENT\)/.test(error.message),
  );
});

const EXAMPLES_FOLDER = fileURLToPath(new URL('../../../examples/', import.meta.url));
/** One per engine the docs describe, so that removing one fails here rather than going unnoticed. */
const EXAMPLES = [
  'scripted.json',
  'claude-code.json',
  'vllm.json',
  'sglang.json',
  'ollama.json',
  'llama-cpp-server.json',
  'messages-upstream.json',
  'fallback.json',
  'llama-cpp-local.json',
];

test('every example config in examples/ is valid and its backends build, with no engine, file or network', async () => {
  const examples = readdirSync(EXAMPLES_FOLDER).filter((name) => name.endsWith('.json'));
  for (const name of EXAMPLES) assert.ok(examples.includes(name), `examples/${name} is missing`);
  for (const name of examples) {
    const { config, folder } = loadConfig(join(EXAMPLES_FOLDER, name));
    assert.ok(config.models.length > 0, name);
    // Building a backend checks what the schema cannot (a fallback's admission fields, a
    // script's file) and reaches nothing: engines are asked at prepare, llama.cpp at load.
    const registry = ModelRegistry.fromConfig(config.models, folder, { warn: () => undefined });
    await registry.close();
  }
});

test("the local-file example's model is a path relative to the config file: missing, named; present, used", async () => {
  const { config, folder } = loadConfig(join(EXAMPLES_FOLDER, 'llama-cpp-local.json'));
  await assert.rejects(ModelRegistry.fromConfig(config.models, folder).prepare({ progress: false }), {
    message: `model file ${join(EXAMPLES_FOLDER, 'models/Qwen3-4B-Q4_K_M.gguf')} does not exist`,
  });
  // The same config in another folder, with the tiny test model where it points.
  const copy = mkdtempSync(join(tmpdir(), 'mms-example-'));
  copyFileSync(join(EXAMPLES_FOLDER, 'llama-cpp-local.json'), join(copy, 'config.json'));
  mkdirSync(join(copy, 'models'));
  copyFileSync(await tinyLlamaModel(), join(copy, 'models/Qwen3-4B-Q4_K_M.gguf'));
  const loaded = loadConfig(join(copy, 'config.json'));
  const registry = ModelRegistry.fromConfig(loaded.config.models, loaded.folder);
  assert.deepEqual(await registry.prepare({ progress: false }), [
    { id: 'qwen3-4b', prepared: join(copy, 'models/Qwen3-4B-Q4_K_M.gguf') },
  ]);
  await registry.close();
});

test('the built-in default config is valid and serves three tiers', () => {
  const { config } = loadConfig(undefined);
  assert.deepEqual(
    config.models.map((entry) => entry.tier),
    ['small', 'mid', 'large'],
  );
});

for (const entry of PUBLISHED_SCHEMAS) {
  test(`the published ${entry.path} is in step with its source (npm run schemas rewrites it)`, () => {
    assert.equal(readFileSync(entry.path, 'utf8'), renderSchema(entry));
  });
}
