/**
 * The models one key may use (config `keys[].models`): names and `*` patterns, matched as model
 * aliases are (support/alias-pattern.ts). A request passes when the name it sends or the model id
 * that name resolves to is listed, so that a key given a model may call it by any of its names.
 *
 * A refusal names only what the request sent: never the models the key may use, nor whether the
 * name it sent is a configured model at all (an unknown name outside the list is a 403 too).
 */
import { ServiceError } from '@model-messages/protocol';
import { AliasPattern, isAliasPattern } from '../support/alias-pattern.js';
import type { ModelEntry, ModelRegistry } from '../models/model-registry.js';

export class ModelPermission {
  private readonly names: ReadonlySet<string>;
  private readonly patterns: readonly AliasPattern[];

  constructor(listed: readonly string[]) {
    this.names = new Set(listed.filter((name) => !isAliasPattern(name)));
    this.patterns = listed.filter(isAliasPattern).map((pattern) => new AliasPattern(pattern));
  }

  allows(name: string): boolean {
    return this.names.has(name) || this.patterns.some((pattern) => pattern.matches(name));
  }
}

/**
 * The model entry `name` resolves to, for a key that may use it; 403 permission_error otherwise.
 * `permission` undefined: every model (a plain key, or a key with no `models`).
 */
export function resolvePermitted(
  registry: ModelRegistry,
  permission: ModelPermission | undefined,
  name: string,
): ModelEntry {
  if (permission === undefined) return registry.resolve(name);
  const byName = permission.allows(name);
  let entry: ModelEntry;
  try {
    entry = registry.resolve(name);
  } catch (error) {
    if (byName) throw error;
    throw refusal(name);
  }
  if (!byName && !permission.allows(entry.profile.id)) throw refusal(name);
  return entry;
}

/** Whether the key may use this configured model by any of its names: for the model list. */
export function permitsEntry(permission: ModelPermission | undefined, entry: ModelEntry): boolean {
  if (permission === undefined) return true;
  return (
    permission.allows(entry.profile.id) ||
    entry.aliases.some((alias) => permission.allows(alias)) ||
    entry.listedIds.some((id) => permission.allows(id))
  );
}

function refusal(name: string): ServiceError {
  return new ServiceError('permission', `this API key may not use the model "${name}"`);
}
