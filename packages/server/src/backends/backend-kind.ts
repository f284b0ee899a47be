/**
 * One engine kind as the service knows it (issue 33): its config's schema, how a backend of it is
 * built, which of its config strings no reply may show, its name in telemetry, how it is admitted
 * in a backends list, and what it does with every field of the model call. The kinds are listed
 * once (backend-kinds.ts); the config union, the factory, the redaction of replies and the
 * telemetry name derive from the list, read when the app is built. docs/extending.md has the
 * recipe for a new kind.
 */
import type { ModelProfile } from '@model-messages/protocol';
import type { z } from 'zod';
import type { BackendReport } from './backend-events.js';
import type { Backend } from './backend.js';
import type { WithPlacedDefaults } from './backend-defaults.js';
import type { CallFieldUses } from './call/call-fields.js';

/** When a model's backends load their models into memory: at start, or at the first request. */
export type LoadMode = 'eager' | 'lazy';

/** What the service hands every backend besides its config. */
export interface BackendContext {
  /** Relative paths of the config resolve against it. */
  configFolder: string;
  /** The model the backend serves. */
  profile: ModelProfile;
  /** The model's `load`. */
  load: LoadMode;
  /**
   * The model, and the backend's place in its backends list (`model mid (backends.1)`): how error
   * replies that concern the backend's own configuration name it, never by its address.
   */
  modelLabel: string;
  /** Where its events go (fallbacks, loads, downloads, regenerations), for the log and the metrics. */
  report: BackendReport;
  /** Where a warning goes (an engine's tokenizer endpoint lost); the report's `warning` event by default. */
  warn: ((line: string) => void) | undefined;
  /** The clock, in milliseconds; tests pass their own. */
  now: (() => number) | undefined;
  /** gen_ai.provider.name of the backend: its kind's `telemetryName` for its config. */
  telemetryName: string;
}

/** The config field names of `Config` whose values are strings. */
export type StringField<Config> = Config extends unknown
  ? { [Field in keyof Config]-?: NonNullable<Config[Field]> extends string ? Field : never }[keyof Config] & string
  : never;

/**
 * The config's strings that no reply may show (config/configured-secrets.ts reads them, for
 * http/reply-redaction.ts): a kind that reaches a server names its key and its address here. The
 * kinds test fails for a field named like a key, token, password, secret or URL left out.
 */
export interface ConfigStrings<Config> {
  /** Fields whose value is a secret: an API key. */
  secrets: ReadonlyArray<StringField<Config>>;
  /** Fields whose value names an environment variable holding a secret (`apiKeyEnv`). */
  secretVariables: ReadonlyArray<StringField<Config>>;
  /** Fields whose value is an address the service reaches: a base URL. */
  addresses: ReadonlyArray<StringField<Config>>;
}

/** How the kind is admitted in a model's `backends` list (backend-placement.ts). */
export interface AdmissionSettings {
  /** `concurrency` when the config leaves it out, for a backend alone or first in its list. */
  defaultConcurrency: number;
  /**
   * A fallback of this kind keeps a `concurrency` of its own rather than the list's: llama-cpp's
   * is its context sequences, each a full context of memory.
   */
  fallbackKeepsConcurrency: boolean;
}

/** A config schema of one kind: a strict object whose `type` is the kind's literal. */
export type KindSchema = z.ZodObject<{ type: z.ZodLiteral<string> } & z.core.$ZodLooseShape>;

export interface BackendKind<Config extends { type: string }> {
  /** The config's `type`. */
  type: Config['type'];
  /**
   * The config's schema, its fields described for the published JSON Schema; its own type is kept
   * by `backendKind`, so that the list can derive the config union (backend-config.ts).
   */
  config: { readonly shape: object };
  /** Builds the backend; relative paths resolve against `context.configFolder`. */
  create(config: WithPlacedDefaults<Config>, context: BackendContext): Backend;
  configStrings: ConfigStrings<Config>;
  /**
   * gen_ai.provider.name of such a backend (the GenAI conventions name a provider by the
   * telemetry flavour it speaks): `llama.cpp`, `vllm`, `anthropic`.
   */
  telemetryName(config: Config): string;
  admission: AdmissionSettings;
  /** What a backend of this config does with every field of the model call (call/call-fields.ts). */
  callFields(config: Config): CallFieldUses;
}

/**
 * A kind's descriptor with its schema's own type kept, so that the list can derive the config
 * union from the schemas (backend-config.ts).
 */
export function backendKind<Schema extends KindSchema>(
  config: Schema,
  kind: Omit<BackendKind<ConfigOf<Schema>>, 'config' | 'type'>,
): BackendKind<ConfigOf<Schema>> & { config: Schema } {
  return { ...kind, type: config.shape.type.value as ConfigOf<Schema>['type'], config };
}

/** The config a kind's schema parses to. */
export type ConfigOf<Schema extends KindSchema> =
  z.output<Schema> extends infer Config extends { type: string } ? Config : never;
