/** `mms pull`: download GGUF files into the models folder, with a progress bar, before serving. */
import { modelFile } from '../backends/llama-cpp/model-file.js';
import { modelBackends } from '../config/config-schema.js';
import { ConfigError, loadConfig } from '../config/load-config.js';

export async function pull(uris: string[], options: { config?: string; modelsFolder?: string }): Promise<void> {
  const targets = uris.length > 0 ? uris : configuredModels(options.config);
  for (const uri of targets) {
    try {
      const path = await modelFile(uri, {
        configFolder: process.cwd(),
        modelsFolder: options.modelsFolder,
        progress: true,
      });
      process.stdout.write(`${uri} -> ${path}\n`);
    } catch (error) {
      process.stderr.write(`mms pull: ${(error as Error).message}\n`);
      process.exitCode = 1;
    }
  }
}

function configuredModels(path: string | undefined): string[] {
  try {
    const { config } = loadConfig(path);
    return config.models.flatMap((model) =>
      modelBackends(model).flatMap((backend) => (backend.type === 'llama-cpp' ? [backend.model] : [])),
    );
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`mms pull: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}
