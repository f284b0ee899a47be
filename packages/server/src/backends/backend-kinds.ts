/**
 * Every engine kind, listed once (issue 33). The config union (backend-config.ts), the factory
 * (create-backend.ts), the defaults placed by a backend's position (backend-placement.ts), the
 * redaction of replies (config/configured-secrets.ts) and the telemetry name all read this list;
 * a new kind is its folder and one line here (docs/extending.md). The order is the config
 * schema's, and so the published JSON Schema's.
 */
import type { BackendKind, ConfigStrings } from './backend-kind.js';
import { llamaCppKind } from './llama-cpp/llama-cpp-kind.js';
import { messagesUpstreamKind } from './messages-upstream/messages-upstream-kind.js';
import { openAiCompatibleKind } from './openai-compatible/openai-compatible-kind.js';
import { scriptedKind } from './scripted/scripted-kind.js';

export const BACKEND_KINDS = [scriptedKind, llamaCppKind, messagesUpstreamKind, openAiCompatibleKind] as const;

/** A config's `type`: one per listed kind. */
export type BackendType = (typeof BACKEND_KINDS)[number]['type'];

const byType = new Map<string, (typeof BACKEND_KINDS)[number]>(BACKEND_KINDS.map((kind) => [kind.type, kind]));

/** The kind of a config the schema accepted (backend-config.ts), typed for that config. */
export function backendKindOf<Config extends { type: string }>(config: Config): BackendKind<Config> {
  // The schema's union admits only the listed types, and each kind's descriptor is typed for its
  // own config: the one cast of the dispatch (a Map loses which value goes with which key).
  return byType.get(config.type) as unknown as BackendKind<Config>;
}

/**
 * The values of a config's strings of one sort (the fields its kind declares in `configStrings`),
 * in the kind's order, unset ones left out: what replies must not show (config/configured-secrets.ts),
 * and what places a list's member on a hash ring (fallback/member-identity.ts).
 */
export function configStringValues(config: { type: string }, sort: keyof ConfigStrings<object>): string[] {
  const fields: readonly string[] = backendKindOf(config).configStrings[sort];
  const values: string[] = [];
  for (const field of fields) {
    const value: unknown = Reflect.get(config, field);
    if (typeof value === 'string') values.push(value);
  }
  return values;
}
