/**
 * Where a model's GGUF comes from: a local path, or a Hugging Face URI downloaded once into a
 * cache folder with a progress bar (`mms pull` does it ahead of time). Offline and not cached is
 * a clear error that says what to do; a download that makes no progress for a minute is stopped.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { resolveModelFile } from 'node-llama-cpp';

const STALL_LIMIT_MS = 60_000;

export function defaultModelsFolder(): string {
  return process.env.MMS_MODELS_FOLDER ?? join(homedir(), '.cache', 'mms', 'models');
}

export function isRemoteModel(model: string): boolean {
  return /^(hf:|huggingface:|https?:\/\/)/.test(model);
}

export interface ModelFileOptions {
  configFolder: string;
  modelsFolder?: string;
  /** Show a progress bar while downloading (the CLI does; tests do not). */
  progress: boolean;
}

export async function modelFile(model: string, options: ModelFileOptions): Promise<string> {
  if (!isRemoteModel(model)) {
    const path = resolve(options.configFolder, model);
    if (!existsSync(path)) throw new Error(`model file ${path} does not exist`);
    return path;
  }
  const folder = options.modelsFolder ? resolve(options.configFolder, options.modelsFolder) : defaultModelsFolder();
  const watchdog = new AbortController();
  let stall = setTimeout(() => watchdog.abort(), STALL_LIMIT_MS);
  try {
    return await resolveModelFile(model, {
      directory: folder,
      cli: options.progress,
      signal: watchdog.signal,
      onProgress: () => {
        clearTimeout(stall);
        stall = setTimeout(() => watchdog.abort(), STALL_LIMIT_MS);
      },
    });
  } catch (error) {
    throw new Error(
      `model ${model} is not in ${folder} and could not be downloaded (${(error as Error).message}). ` +
        `On a machine with network access run \`npx mms pull ${model}\` (MMS_MODELS_FOLDER sets the folder), ` +
        `or copy the .gguf file there, or set the model's backend.model to a local file path.`,
      { cause: error },
    );
  } finally {
    clearTimeout(stall);
  }
}
