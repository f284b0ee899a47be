/**
 * Where a model's GGUF comes from: a local path, or a remote URI (`hf:`, https) downloaded once
 * into the models folder with a progress bar (`mms pull` does it ahead of time). An index in
 * that folder remembers which file each URI became, so a cached model resolves with no network
 * at all. Offline and not cached is a clear error that says what to do; a download that makes
 * no progress for a minute is stopped. HF_ENDPOINT points `hf:` URIs at a mirror.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

const STALL_LIMIT_MS = 60_000;
const INDEX_FILE = 'mms-models.json';

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
  const cached = readIndex(folder)[model];
  if (cached !== undefined && existsSync(cached)) return cached;
  const path = await download(model, folder, options.progress);
  writeIndex(folder, { ...readIndex(folder), [model]: path });
  return path;
}

async function download(model: string, folder: string, progress: boolean): Promise<string> {
  const watchdog = new AbortController();
  let stall = setTimeout(() => watchdog.abort(), STALL_LIMIT_MS);
  try {
    // Imported only for a download: loading node-llama-cpp costs most of a second at every start.
    const { resolveModelFile } = await import('node-llama-cpp');
    return await resolveModelFile(model, {
      directory: folder,
      cli: progress,
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
        `or set the model's backend.model to a local .gguf path.`,
      { cause: error },
    );
  } finally {
    clearTimeout(stall);
  }
}

function readIndex(folder: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(join(folder, INDEX_FILE), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

function writeIndex(folder: string, index: Record<string, string>): void {
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`);
}
