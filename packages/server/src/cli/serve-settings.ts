/**
 * `mms serve`'s settings: its flags, and the environment behind them. Both are checked here,
 * when serve runs, not when the command line is declared, so a bad variable cannot break
 * `mms --help` or another command; a bad value is reported like a config field (`mms: MMS_PORT:
 * ...`, exit 2) before anything starts. A blank variable counts as unset: `MMS_PORT=` in a
 * compose file or a shell means "not given", not port 0.
 */
import { apiKey } from '../config/config-schema.js';
import { ConfigError } from '../support/config-error.js';

/** pino's levels that the help names; a typo would otherwise surface as pino's stack trace. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What commander hands the serve action, unparsed; absent flags are undefined. */
export interface ServeFlags {
  config?: string;
  host?: string;
  port?: string;
  logLevel?: string;
}

export interface ServeSettings {
  config?: string;
  host?: string;
  port?: number;
  logLevel: LogLevel;
  /** From MMS_API_KEYS, added to the config's apiKeys. */
  apiKeys: string[];
  /** From MMS_DATA_FOLDER, in place of the config's dataFolder. */
  dataFolder?: string;
}

/**
 * Digits only: Number() would also read '0x50', '1e3', ' 80' and '' as ports. 0 stays allowed,
 * as in listen.port: the system picks a free port.
 */
function parsePort(text: string, source: string): number {
  const port = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(port <= 65535)) throw new ConfigError(`${source}: must be an integer from 0 to 65535 (it is "${text}")`);
  return port;
}

function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/**
 * MMS_API_KEYS: comma-separated, each held to the config's apiKeys rule (the same schema and
 * message), so that a short key cannot get in through the environment. Its position is named,
 * never the key.
 */
function environmentApiKeys(environment: NodeJS.ProcessEnv): string[] {
  const keys = (environment.MMS_API_KEYS ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean);
  keys.forEach((key, index) => {
    const checked = apiKey.safeParse(key);
    if (!checked.success)
      throw new ConfigError(`MMS_API_KEYS: key ${index + 1} of ${keys.length}: ${checked.error.issues[0]?.message}`);
  });
  return keys;
}

/** A set, non-blank environment variable, or undefined. */
export function environmentValue(name: string, environment: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = environment[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * A flag wins over its variable; MMS_API_KEYS has no flag. Throws a ConfigError that names the flag or the variable whose
 * value is wrong, so that nothing is prepared or started with it.
 */
export function serveSettings(flags: ServeFlags, environment: NodeJS.ProcessEnv = process.env): ServeSettings {
  const [port, portSource] =
    flags.port !== undefined ? [flags.port, '--port'] : [environmentValue('MMS_PORT', environment), 'MMS_PORT'];
  const [logLevel, logLevelSource] =
    flags.logLevel !== undefined
      ? [flags.logLevel, '--log-level']
      : [environmentValue('MMS_LOG_LEVEL', environment) ?? 'info', 'MMS_LOG_LEVEL'];
  if (!isLogLevel(logLevel))
    throw new ConfigError(`${logLevelSource}: must be one of ${LOG_LEVELS.join(', ')} (it is "${logLevel}")`);
  return {
    config: flags.config,
    host: flags.host ?? environmentValue('MMS_HOST', environment),
    port: port === undefined ? undefined : parsePort(port, portSource),
    logLevel,
    apiKeys: environmentApiKeys(environment),
    dataFolder: environmentValue('MMS_DATA_FOLDER', environment),
  };
}
