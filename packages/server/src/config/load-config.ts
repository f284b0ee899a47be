/** Reads, merges and validates the config at start; every error names the field. */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describeIssue } from '@model-messages/protocol';
import { serviceConfig, type ServiceConfig } from './config-schema.js';
import { defaultConfig } from './default-config.js';
import { KEY_HASH_PREFIX } from './key-config.js';
import { keyId, sha256Hex } from '../support/key-id.js';
import { AliasPattern, isAliasPattern } from '../support/alias-pattern.js';
import { ConfigError } from '../support/config-error.js';

export interface LoadedConfig {
  config: ServiceConfig;
  /** Folder that relative paths in the config resolve against. */
  folder: string;
}

export interface ConfigOverrides {
  host?: string;
  port?: number;
  /** Added to the file's keys (MMS_API_KEYS). */
  apiKeys?: string[];
  /** In place of the file's dataFolder (MMS_DATA_FOLDER). */
  dataFolder?: string;
}

export function loadConfig(path: string | undefined, overrides: ConfigOverrides = {}): LoadedConfig {
  const input = path ? readConfigFile(path) : structuredClone(defaultConfig);
  const folder = path ? dirname(resolve(path)) : process.cwd();
  return { config: resolveConfigPaths(validateConfig(input, path ?? 'the default config', overrides), folder), folder };
}

/**
 * Paths in the config are relative to its file's folder, like a backend's `script` and `model`
 * (which their backends resolve against `folder`); the data folder and the server tools get
 * theirs resolved here.
 */
function resolveConfigPaths(config: ServiceConfig, folder: string): ServiceConfig {
  if (config.dataFolder !== undefined) config.dataFolder = resolve(folder, config.dataFolder);
  const provider = config.serverTools.webSearch.provider;
  if (provider?.type === 'folder') {
    provider.folder = resolve(folder, provider.folder);
    if (provider.indexFile !== undefined) provider.indexFile = resolve(folder, provider.indexFile);
  }
  return config;
}

function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `config ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config ${path}: not valid JSON (${(error as Error).message})`);
  }
}

export function validateConfig(input: unknown, source: string, overrides: ConfigOverrides = {}): ServiceConfig {
  const result = serviceConfig.safeParse(input);
  if (!result.success) throw new ConfigError(`config ${source}: ${describeIssue(result.error.issues)}`);
  const config = result.data;
  if (overrides.host !== undefined) config.listen.host = overrides.host;
  if (overrides.port !== undefined) config.listen.port = overrides.port;
  if (overrides.dataFolder !== undefined) config.dataFolder = resolve(overrides.dataFolder);
  config.apiKeys = [...new Set([...config.apiKeys, ...(overrides.apiKeys ?? [])])];
  checkModelNames(config, source);
  checkKeyIdentities(config, source);
  return config;
}

/**
 * Each key is one identity: an id given twice would merge two keys' limits and usage, and a key
 * given twice (two entries with one hash, or a plain key whose hash an entry holds) would be
 * counted as whichever comes first. A plain key's id (support/key-id.ts) is taken too.
 */
function checkKeyIdentities(config: ServiceConfig, source: string): void {
  const ids = new Map<string, string>(config.apiKeys.map((key, index) => [keyId(key), `apiKeys.${index}`]));
  const hashes = new Map<string, string>(
    config.apiKeys.map((key, index) => [`${KEY_HASH_PREFIX}${sha256Hex(key)}`, `apiKeys.${index}`]),
  );
  config.keys.forEach((key, index) => {
    const place = `keys.${index}`;
    const idOwner = ids.get(key.id);
    if (idOwner !== undefined)
      throw new ConfigError(`config ${source}: ${place}.id: "${key.id}" is also ${idOwner}'s id`);
    const hashOwner = hashes.get(key.hash);
    if (hashOwner !== undefined)
      throw new ConfigError(`config ${source}: ${place}.hash: the same key as ${hashOwner}; give each key once`);
    ids.set(key.id, place);
    hashes.set(key.hash, place);
  });
}

/**
 * Ids and exact aliases share one namespace: a name that resolves two ways is a config error.
 * Patterns may overlap, as the first that matches wins (models/model-registry.ts), but one given
 * twice is a mistake: the second place could never take a name.
 */
function checkModelNames(config: ServiceConfig, source: string): void {
  const owners = new Map<string, string>();
  const patterns = new Map<string, { place: string; text: string; model: string }>();
  config.models.forEach((model, modelIndex) => {
    const exactNames = new Set([
      model.id,
      ...model.aliases.filter((alias) => !isAliasPattern(alias)),
      // A listed id resolves as an exact alias: it may repeat the model's own names.
      ...(model.listAs ?? []),
    ]);
    for (const name of exactNames) {
      const owner = owners.get(name);
      if (owner !== undefined)
        throw new ConfigError(`config ${source}: models: "${name}" names both ${owner} and ${model.id}`);
      owners.set(name, model.id);
    }
    model.aliases.forEach((alias, aliasIndex) => {
      if (!isAliasPattern(alias)) return;
      const place = `models.${modelIndex}.aliases.${aliasIndex}`;
      const canonical = new AliasPattern(alias).canonical;
      const earlier = patterns.get(canonical);
      if (earlier !== undefined)
        throw new ConfigError(
          `config ${source}: ${place}: the pattern "${alias}" (model ${model.id}) is already given at ${earlier.place} ("${earlier.text}", model ${earlier.model}); give each pattern once`,
        );
      patterns.set(canonical, { place, text: alias, model: model.id });
    });
  });
}
