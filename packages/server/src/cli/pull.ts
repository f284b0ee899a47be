/** `mms pull`: download GGUF files into the models folder, with a progress bar, before serving. */
import { configuredModelFiles } from './configured-models.js';
import { ModelDownloadError, modelFile } from '../backends/llama-cpp/model-file.js';
import { loadConfig } from '../config/load-config.js';
import { ConfigError } from '../support/config-error.js';

interface PullTarget {
  model: string;
  configFolder: string;
  modelsFolder: string | undefined;
}

export async function pull(uris: string[], options: { config?: string; modelsFolder?: string }): Promise<void> {
  const targets =
    uris.length > 0
      ? uris.map((model) => ({ model, configFolder: process.cwd(), modelsFolder: options.modelsFolder }))
      : configuredTargets(options.config, options.modelsFolder);
  if (targets === undefined) return;
  for (const { model, configFolder, modelsFolder } of targets) {
    try {
      const path = await modelFile(model, { configFolder, modelsFolder, progress: true });
      process.stdout.write(`${model} -> ${path}\n`);
    } catch (error) {
      // The download error's own advice is to run pull: here only its reason helps.
      process.stderr.write(
        error instanceof ModelDownloadError
          ? `mms pull: ${model} could not be downloaded into ${error.folder} (${error.reason})\n`
          : `mms pull: ${(error as Error).message}\n`,
      );
      process.exitCode = 1;
    }
  }
}

/**
 * The config's remote models that are not in their folders yet, each once. When there are none
 * it says so and returns undefined; a local file the config names but that is missing is
 * reported, since serving would stop on it and pulling cannot fetch it.
 */
function configuredTargets(path: string | undefined, modelsFolder: string | undefined): PullTarget[] | undefined {
  let files;
  try {
    const { config, folder } = loadConfig(path);
    files = configuredModelFiles(config.models, folder, modelsFolder);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`mms pull: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const source = path ?? 'the default config';
  for (const file of files.filter((candidate) => !candidate.remote && candidate.path === undefined)) {
    process.stderr.write(
      `mms pull: model ${file.id}: local file ${file.location} does not exist (pull fetches only hf: and https: models)\n`,
    );
    process.exitCode = 1;
  }
  const remote = files.filter((file) => file.remote);
  const missing = new Map<string, PullTarget>();
  for (const file of remote.filter((candidate) => candidate.path === undefined))
    // The location is absolute: the config's folder no longer matters for where it goes.
    missing.set(`${file.location}\0${file.model}`, {
      model: file.model,
      configFolder: process.cwd(),
      modelsFolder: file.location,
    });
  if (missing.size > 0) return [...missing.values()];
  if (remote.length === 0) process.stdout.write(`nothing to fetch: ${source} names no hf: or https: model\n`);
  else {
    const lines = new Set(remote.map((file) => `  ${file.model} -> ${file.path}\n`));
    process.stdout.write(`nothing to fetch: every model of ${source} is already here\n${[...lines].join('')}`);
  }
  return undefined;
}
