/**
 * `mms serve`: load and check the config, prepare the models (find or download their files),
 * build the app, listen, load the eager models, and shut down gracefully. Models load once the
 * service listens, so that /health (liveness) answers while a large model loads and /ready
 * says when it is done; a model that cannot be loaded stops the service, exit 2.
 *
 * The settings, the config and the signing key are checked before the service's modules are
 * imported (about half of a start's CPU), so that a mistake in them is reported at once.
 */
import type { ModelDownloadError } from '../backends/llama-cpp/model-file.js';
import type { App } from '../app.js';
import type { ModelConfig } from '../config/config-schema.js';
import { loadConfig } from '../config/load-config.js';
import { ConfigError } from '../support/config-error.js';
import type { ModelRegistry } from '../models/model-registry.js';
import { defaultDataFolder, resolveSigningKey, type SigningKeys } from '../signing/signing-key.js';
import { serveSettings, type ServeFlags, type ServeSettings } from './serve-settings.js';
import { startTracing, type Tracing } from './tracing-setup.js';

/** In-flight requests get this long to finish after SIGINT/SIGTERM before the process exits. */
const SHUTDOWN_GRACE_MS = 10_000;

export async function serve(flags: ServeFlags): Promise<void> {
  let settings: ServeSettings;
  let loaded;
  let signingKey: SigningKeys;
  let tracing: Tracing | undefined;
  try {
    settings = serveSettings(flags);
    loaded = loadConfig(settings.config, {
      host: settings.host,
      port: settings.port,
      apiKeys: settings.apiKeys,
      dataFolder: settings.dataFolder,
    });
    if (loaded.config.apiKeys.length === 0 && loaded.config.keys.length === 0) {
      throw new ConfigError(
        'no API keys are configured: set MMS_API_KEYS=<key>, or add keys (mms keys new --id <id>) or apiKeys to the config file',
      );
    }
    // Read here, not in buildApp, so that a key file that cannot be read stops the start like a
    // config error. A served service always has a data folder: its key, and the quotas' counts
    // of the memory store (issue 37), must outlive the process.
    loaded.config.dataFolder ??= defaultDataFolder();
    signingKey = resolveSigningKey({ signingKey: loaded.config.signingKey, dataFolder: loaded.config.dataFolder });
    // Before the app: its first request's span goes to the SDK.
    tracing = await startTracing();
  } catch (error) {
    exitOnConfigError(error);
  }
  const { config, folder } = loaded;
  const [{ buildApp }, { ModelRegistry }, { BatchedLogDestination }, { ModelDownloadError }] = await Promise.all([
    import('../app.js'),
    import('../models/model-registry.js'),
    import('../observability/batched-log-destination.js'),
    import('../backends/llama-cpp/model-file.js'),
  ]);
  let registry: ModelRegistry;
  try {
    // Building a backend reads its files (a scripted backend's script): a failure is a config error too.
    registry = ModelRegistry.fromConfig(config.models, folder);
  } catch (error) {
    process.stderr.write(`mms: ${(error as Error).message}\n`);
    process.exit(2);
  }
  // Built before the models are prepared, so that its log has their downloads and what each found.
  let app: App;
  try {
    app = buildApp({
      config,
      registry,
      signingKey,
      logLevel: settings.logLevel,
      logDestination: new BatchedLogDestination(1),
    });
  } catch (error) {
    // The limits' database that cannot be opened (issue 37) stops the start like a config error.
    exitOnConfigError(error);
  }
  // Node's warnings (a sandbox the kernel cannot limit, a deprecation) are log lines like the
  // rest, rather than text on stderr beside them.
  process.removeAllListeners('warning');
  process.on('warning', (warning: NodeJS.ErrnoException) =>
    app.log.warn({ event: 'warning', code: warning.code, name: warning.name }, warning.message),
  );
  try {
    for (const { id, prepared } of await registry.prepare({ progress: process.stderr.isTTY === true }))
      app.log.info({ model: id, prepared }, `${id}: ${prepared}`);
  } catch (error) {
    process.stderr.write(
      error instanceof ModelDownloadError
        ? await missingModels(error, config.models, folder, settings.config)
        : `mms: ${(error as Error).message}\n`,
    );
    await app.close().catch(() => undefined);
    process.exit(2);
  }
  // Before listening: from the `listening at` line on, a supervisor may signal, and a signal with
  // no listener yet kills the process outright. Listening for good, not once: node-llama-cpp
  // (through signal-exit) listens too, and sends the signal again to a process where no other
  // listener is left, which would kill it before its in-flight requests finish. A second signal
  // stops at once, as it did before.
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) process.exit(1);
      stopping = true;
      app.log.info(`${signal}: finishing in-flight requests, then exiting`);
      setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
      // The spans of the last requests are exported before the process goes.
      app
        .close()
        .then(() => tracing?.shutdown())
        .then(
          () => process.exit(0),
          () => process.exit(1),
        );
    });
  }
  try {
    await app.listen({ host: config.listen.host, port: config.listen.port });
  } catch (error) {
    process.stderr.write(
      `mms: cannot listen on ${hostPort(config.listen.host, config.listen.port)}: ${listenFailure(error as NodeJS.ErrnoException)}\n`,
    );
    // Closing the app closes the models too (a llama-cpp backend holds a loaded model).
    await app.close().catch(() => undefined);
    process.exit(2);
  }
  app.log.info(`mms serving ${config.models.map((model) => model.id).join(', ')}`);
  registry.load().then(
    () => app.log.info('every model with load "eager" is loaded'),
    async (error: Error) => {
      process.stderr.write(`mms: ${error.message}\n`);
      await app.close().catch(() => undefined);
      process.exit(2);
    },
  );
}

/** A config error stops the start with its message and exit status 2; any other error goes on up. */
function exitOnConfigError(error: unknown): never {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`mms: ${error.message}\n`);
  process.exit(2);
}

/**
 * A download failed (offline, most often): every model of the config that is not at hand yet,
 * found without the network, and the one command that fetches them all, so that following the
 * advice takes one round rather than one per model.
 */
async function missingModels(
  error: ModelDownloadError,
  models: readonly ModelConfig[],
  configFolder: string,
  configPath: string | undefined,
): Promise<string> {
  const { configuredModelFiles } = await import('./configured-models.js');
  const missing = configuredModelFiles(models, configFolder).filter((file) => file.remote && file.path === undefined);
  const folders = new Set(missing.map((file) => file.location));
  const oneFolder = folders.size === 1 ? [...folders][0] : undefined;
  const lines = missing.map(
    (file) => `  ${file.id}: ${file.model}${oneFolder === undefined ? ` (not in ${file.location})` : ''}\n`,
  );
  const command = configPath === undefined ? 'npx mms pull' : `npx mms pull --config ${shellWord(configPath)}`;
  return (
    `mms: ${error.model} could not be downloaded (${error.reason}).\n` +
    `mms: ${missing.length === 1 ? 'this model is' : `these ${missing.length} models are`} not ` +
    `${oneFolder === undefined ? 'in their folders' : `in ${oneFolder}`} yet:\n${lines.join('')}` +
    `mms: fetch ${missing.length === 1 ? 'it' : 'them all'} with \`${command}\` (on a machine with network access, ` +
    `then copy the folder here; MMS_MODELS_FOLDER sets it, HF_ENDPOINT names a Hugging Face mirror), ` +
    `or set each backend's model to a local .gguf path.\n`
  );
}

/** A path as a shell reads it back: quoted only when it has to be. */
function shellWord(text: string): string {
  return /^[\w./:@+-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The usual reasons in words; the system's code stays for searching. */
const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: "the address is not one of this machine's",
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved now',
};

function listenFailure(error: NodeJS.ErrnoException): string {
  const reason = error.code === undefined ? undefined : LISTEN_FAILURES[error.code];
  return reason === undefined ? error.message : `${reason} (${error.code})`;
}
