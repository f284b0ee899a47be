/**
 * The GGUF files a config's llama-cpp backends need, each found or not without the network:
 * what `mms pull --config` fetches, and what `mms serve` lists when it cannot fetch them, so that
 * one command gets every missing model rather than one per try. It reads the service's config,
 * so it sits with the commands rather than in backends/llama-cpp/, below the config (issue 33).
 */
import { resolve } from 'node:path';
import { modelBackends, type ModelConfig } from '../config/config-schema.js';
import { findModelFile, isRemoteModel, modelsFolderFor } from '../backends/llama-cpp/model-file.js';

export interface ConfiguredModelFile {
  /** The model entry that uses it (a fallback list may hold more than one llama-cpp member). */
  id: string;
  /** As the config gives it: a URI, or a path relative to the config file. */
  model: string;
  remote: boolean;
  /** A remote model's cache folder, absolute; a local model's own path. */
  location: string;
  /** The file, when it is at hand: the cached download or the local path. */
  path: string | undefined;
}

/**
 * `modelsFolder` overrides every backend's own (`mms pull --models-folder`); without it each
 * backend's `modelsFolder`, else MMS_MODELS_FOLDER, else the default, as `mms serve` looks.
 */
export function configuredModelFiles(
  models: readonly ModelConfig[],
  configFolder: string,
  modelsFolder?: string,
): ConfiguredModelFile[] {
  return models.flatMap((model) =>
    modelBackends(model).flatMap((backend) => {
      if (backend.type !== 'llama-cpp') return [];
      const options = {
        configFolder,
        modelsFolder: modelsFolder === undefined ? backend.modelsFolder : resolve(modelsFolder),
      };
      const remote = isRemoteModel(backend.model);
      return [
        {
          id: model.id,
          model: backend.model,
          remote,
          location: remote ? modelsFolderFor(options) : resolve(configFolder, backend.model),
          path: findModelFile(backend.model, options),
        },
      ];
    }),
  );
}
