/** Resolves a model id or alias to its profile, its backend and the backend's admission control. */
import { ServiceError, type ModelInfo, type ModelProfile } from '@model-messages/protocol';
import { AdmissionController } from '../admission/admission-controller.js';
import type { Backend, BackendReadiness } from '../backends/backend.js';
import { createBackend } from '../backends/create-backend.js';
import { FallbackBackend } from '../backends/fallback/fallback-backend.js';
import { fallbackConfig } from '../backends/fallback/fallback-config.js';
import { memberIdentities } from '../backends/fallback/member-identity.js';
import type { LoadMode } from '../backends/backend-kind.js';
import { modelBackends, type ModelConfig } from '../config/config-schema.js';
import { FieldError } from '../support/field-error.js';
import { ConfigError } from '../support/config-error.js';
import { ModelEvents } from './model-events.js';
import { AliasPattern, isAliasPattern } from '../support/alias-pattern.js';

export interface ModelEntry {
  profile: ModelProfile;
  aliases: string[];
  /** The ids GET /v1/models lists for it (the config's `listAs`, else its id); each resolves to it. */
  listedIds: string[];
  displayName: string;
  backend: Backend;
  admission: AdmissionController;
  /** When its backends load their models: at start (eager) or at the first request (lazy). */
  load: LoadMode;
}

/** What GET /ready says of one model: ready when one of its backends is (a fallback list can answer). */
export interface ModelReadiness {
  id: string;
  ready: boolean;
  backends: BackendReadiness[];
}

/**
 * A name resolves to the model whose id it is, else the model with it as an exact alias, else
 * the model of the first alias pattern that matches it (models in config order, each model's
 * aliases in order). So a catch-all pattern never takes a name some model gives exactly, and the
 * config's order says which of two patterns wins.
 */
export class ModelRegistry {
  /** Ids and exact aliases: one namespace, which the config check keeps free of clashes. */
  private readonly byName = new Map<string, ModelEntry>();
  private readonly patterns: Array<{ pattern: AliasPattern; entry: ModelEntry }> = [];
  readonly entries: readonly ModelEntry[];
  /** Registry creation time, reported as `created_at` by the models endpoint. */
  private readonly createdAt = new Date().toISOString();

  /**
   * `events`: where the backends report (fallbacks, circuit changes, model loads...); the app
   * subscribes to it for its log and metrics.
   */
  constructor(
    entries: ModelEntry[],
    readonly events = new ModelEvents(),
  ) {
    this.entries = entries;
    // Ids first, so that an id wins even over an alias the config check would have refused.
    for (const entry of entries) this.byName.set(entry.profile.id, entry);
    for (const entry of entries) {
      for (const alias of entry.aliases) {
        if (isAliasPattern(alias)) this.patterns.push({ pattern: new AliasPattern(alias), entry });
        else if (!this.byName.has(alias)) this.byName.set(alias, entry);
      }
      for (const listed of entry.listedIds) if (!this.byName.has(listed)) this.byName.set(listed, entry);
    }
  }

  /**
   * `now` is the clock of the fallback lists' circuit breakers and the backends' retry timers;
   * `warn` receives the backends' warnings, prefixed with the model id (by default they are
   * `warning` events, which the app logs). Tests pass their own of both.
   */
  static fromConfig(
    models: readonly ModelConfig[],
    configFolder: string,
    options: { now?: () => number; warn?: (line: string) => void } = {},
  ): ModelRegistry {
    const events = new ModelEvents();
    const entries = models.map((model, modelIndex): ModelEntry => {
      const profile: ModelProfile = {
        id: model.id,
        tier: model.tier,
        generation: model.generation,
        contextWindow: model.contextWindow,
        maxOutputTokens: model.maxOutputTokens,
        maxTokens: model.maxTokens,
      };
      const configs = modelBackends(model);
      const primary = configs[0];
      if (!primary) throw new Error(`model ${model.id} has no backend`);
      const report = events.reportFor(model.id);
      const warn = options.warn
        ? (line: string) => options.warn!(`${model.id}: ${line}`)
        : (message: string) => report({ type: 'warning', message });
      const backends = configs.map((config, backendIndex) => {
        const modelLabel = model.backends ? `model ${model.id} (backends.${backendIndex})` : `model ${model.id}`;
        try {
          return createBackend(config, {
            configFolder,
            profile,
            load: model.load,
            modelLabel,
            report,
            warn,
            now: options.now,
          });
        } catch (error) {
          // A backend that cannot be built is a config error: name the field, as the config's checks do.
          const where = model.backends
            ? `models.${modelIndex}.backends.${backendIndex}`
            : `models.${modelIndex}.backend`;
          throw new ConfigError(
            `${error instanceof FieldError ? `${where}.${error.field}` : where}: ${(error as Error).message}`,
          );
        }
      });
      return {
        profile,
        aliases: model.aliases,
        listedIds: model.listAs ?? [model.id],
        displayName: model.displayName ?? model.id,
        backend: model.backends
          ? new FallbackBackend(backends, {
              ...(model.fallback ?? fallbackConfig.parse({})),
              balance: model.balance,
              loadEpsilon: model.loadEpsilon,
              identities: memberIdentities(configs),
              now: options.now,
              report,
            })
          : backends[0]!,
        // A list serves one model's traffic: its first backend's values admit it (fallbacks may
        // not set their own; backends/backend-defaults.ts).
        admission: new AdmissionController(primary.concurrency, primary.queue),
        load: model.load,
      };
    });
    return new ModelRegistry(entries, events);
  }

  resolve(name: string): ModelEntry {
    const entry = this.byName.get(name) ?? this.patterns.find(({ pattern }) => pattern.matches(name))?.entry;
    if (!entry)
      throw new ServiceError(
        'not_found',
        `model: ${name} was not found; configured models: ${this.entries.map((candidate) => candidate.profile.id).join(', ')}`,
      );
    return entry;
  }

  /** The model as GET /v1/models shows it: under its id, or `id`, one of the ids it is listed as. */
  info(entry: ModelEntry, id = entry.profile.id): ModelInfo {
    return { type: 'model', id, display_name: entry.displayName, created_at: this.createdAt };
  }

  /** Prepares every backend (downloads missing model files) before the service listens. */
  async prepare(options: { progress: boolean }): Promise<Array<{ id: string; prepared: string }>> {
    const prepared = [];
    for (const entry of this.entries)
      prepared.push({ id: entry.profile.id, prepared: await entry.backend.prepare(options) });
    return prepared;
  }

  /**
   * Loads every model with `load: "eager"` (llama-cpp models into memory), in config order and
   * one at a time: models loading at once compete for memory and cores, and a failure then
   * names its own model. Rejects with the first failure.
   */
  async load(): Promise<void> {
    for (const entry of this.entries) if (entry.load === 'eager') await entry.backend.load();
  }

  /** Every model's readiness, for GET /ready. */
  readiness(): Promise<ModelReadiness[]> {
    return Promise.all(
      this.entries.map(async (entry) => {
        const backends = await entry.backend.readiness();
        return { id: entry.profile.id, ready: backends.some((backend) => backend.ready), backends };
      }),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.entries.map((entry) => entry.backend.close()));
  }
}
