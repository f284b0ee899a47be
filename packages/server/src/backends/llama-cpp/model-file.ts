/**
 * Where a model's GGUF comes from: a local path, or a remote URI (`hf:`, https) downloaded once
 * into the models folder with a progress bar (`mms pull` does it ahead of time). An index in
 * that folder remembers which file each URI became, so a cached model resolves with no network
 * at all. Offline and not cached is a clear error that says what to do; a download that makes
 * no progress for a minute is stopped. HF_ENDPOINT points `hf:` URIs at a mirror: node-llama-cpp
 * reads it (MODEL_ENDPOINT, if set, wins over it), and a test downloads through a stand-in.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';

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
  /** Told how long a download took, once it is done (the service's log). */
  downloaded?: (seconds: number) => void;
}

/** A remote model that is not in the models folder and could not be fetched. */
export class ModelDownloadError extends Error {
  constructor(
    readonly model: string,
    readonly folder: string,
    readonly reason: string,
    cause: unknown,
  ) {
    super(
      `model ${model} is not in ${folder} and could not be downloaded (${reason}). ` +
        `On a machine with network access run \`npx mms pull ${model}\` (MMS_MODELS_FOLDER sets the folder), ` +
        `or set the model's backend.model to a local .gguf path.`,
      { cause },
    );
  }
}

/** The folder a remote model is cached in: the backend's `modelsFolder`, else MMS_MODELS_FOLDER, else the default. */
export function modelsFolderFor(options: Pick<ModelFileOptions, 'configFolder' | 'modelsFolder'>): string {
  return options.modelsFolder ? resolve(options.configFolder, options.modelsFolder) : defaultModelsFolder();
}

/**
 * The model's file if it is at hand, with no network: a local path that exists, or a remote
 * model already in its folder's index. Undefined otherwise.
 */
export function findModelFile(
  model: string,
  options: Pick<ModelFileOptions, 'configFolder' | 'modelsFolder'>,
): string | undefined {
  if (!isRemoteModel(model)) {
    const path = resolve(options.configFolder, model);
    return existsSync(path) ? path : undefined;
  }
  const folder = modelsFolderFor(options);
  const cached = readIndex(folder)[model];
  if (cached === undefined) return undefined;
  if (existsSync(cached)) return cached;
  // The index holds absolute paths: a folder copied from the machine that pulled it (as the
  // offline advice says to) keeps its files under their own names, here.
  const moved = join(folder, basename(cached));
  return existsSync(moved) ? moved : undefined;
}

export async function modelFile(model: string, options: ModelFileOptions): Promise<string> {
  const found = findModelFile(model, options);
  if (found !== undefined) return found;
  if (!isRemoteModel(model)) throw new Error(`model file ${resolve(options.configFolder, model)} does not exist`);
  const folder = modelsFolderFor(options);
  const started = performance.now();
  const path = await download(model, folder, options.progress);
  options.downloaded?.((performance.now() - started) / 1000);
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
    throw new ModelDownloadError(model, folder, (error as Error).message, error);
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
