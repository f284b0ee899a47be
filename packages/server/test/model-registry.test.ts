/** Which model a name resolves to: an id, then an exact alias, then the first pattern in config order. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '@model-messages/protocol';
import { modelConfig } from '../src/config/config-schema.js';
import { ModelRegistry } from '../src/models/model-registry.js';

/**
 * Each model parsed on its own, without the whole config's name check, so that the registry's
 * own order shows even where that check would refuse the config (an id given as another's alias).
 */
function registry(models: Array<{ id: string; aliases: string[] }>): ModelRegistry {
  return ModelRegistry.fromConfig(
    models.map((model) =>
      modelConfig.parse({
        ...model,
        tier: 'mid',
        generation: 'newer',
        contextWindow: 1000,
        maxOutputTokens: 100,
        backend: { type: 'scripted' },
      }),
    ),
    process.cwd(),
  );
}

const resolved = (models: ModelRegistry, name: string) => models.resolve(name).profile.id;

test('an exact id beats an exact alias, which beats a pattern', () => {
  const models = registry([
    { id: 'by-pattern', aliases: ['claude-*'] },
    { id: 'by-alias', aliases: ['claude-opus', 'claude-haiku'] },
    { id: 'claude-haiku', aliases: [] },
  ]);
  assert.equal(resolved(models, 'claude-haiku'), 'claude-haiku');
  assert.equal(resolved(models, 'claude-opus'), 'by-alias');
  assert.equal(resolved(models, 'claude-sonnet'), 'by-pattern');
});

test("the first matching pattern wins: models in order, each model's aliases in order", () => {
  const models = registry([
    { id: 'first', aliases: ['exact', '*haiku*', 'claude-opus-*'] },
    { id: 'second', aliases: ['claude-*', '*'] },
  ]);
  assert.equal(resolved(models, 'claude-haiku-4-5'), 'first');
  assert.equal(resolved(models, 'claude-opus-5-5'), 'first');
  assert.equal(resolved(models, 'claude-sonnet-4-5'), 'second');
  // The catch-all takes what nothing before it does, the empty name included.
  assert.equal(resolved(models, 'gpt-5'), 'second');
  assert.equal(resolved(models, ''), 'second');
});

test('a name that no id, alias or pattern takes is 404 listing the configured models', () => {
  const models = registry([{ id: 'only', aliases: ['claude-*'] }]);
  assert.throws(
    () => models.resolve('gpt-5'),
    (error: unknown) =>
      error instanceof ServiceError &&
      error.code === 'not_found' &&
      error.message === 'model: gpt-5 was not found; configured models: only',
  );
});
