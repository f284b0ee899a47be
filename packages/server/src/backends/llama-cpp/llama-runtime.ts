/**
 * One llama.cpp runtime per process and GPU choice, shared by every model that uses it:
 * loading the native binding is slow, and two copies would compete for the same cores.
 */
import { getLlama, Llama, LlamaLogLevel } from 'node-llama-cpp';
import type { LlamaCppBackendConfig } from './llama-cpp-config.js';

const runtimes = new Map<string, Promise<Llama>>();
/** Who hears llama.cpp's error lines now, besides the console (errorLinesDuring). */
const errorListeners = new Set<(line: string) => void>();

export function llamaRuntime(gpu: LlamaCppBackendConfig['gpu']): Promise<Llama> {
  let runtime = runtimes.get(gpu);
  if (!runtime) {
    // build: 'never': the prebuilt binaries load offline; building from source needs the network.
    runtime = getLlama({
      gpu: gpu === 'none' ? false : gpu,
      build: 'never',
      progressLogs: false,
      logLevel: LlamaLogLevel.error,
      logger: (level, message) => {
        for (const listener of errorListeners) listener(message);
        Llama.defaultConsoleLogger(level, message);
      },
    });
    runtimes.set(gpu, runtime);
  }
  return runtime;
}

/**
 * Runs `action`; a failure is thrown again with the reason llama.cpp logged meanwhile, when it
 * logged one: node-llama-cpp rejects a model that fails to load with "Failed to load model"
 * alone, and the reason ("tensor '...' data is not within the file bounds, model is corrupted or
 * incomplete") is only in llama.cpp's log. Lines of anything else running at the same time are
 * heard too; the service loads its eager models one at a time, so that a start names the right
 * reason.
 */
export async function withLoggedReason<T>(action: () => Promise<T>): Promise<T> {
  const lines: string[] = [];
  const listener = (line: string) => lines.push(line.trim());
  errorListeners.add(listener);
  try {
    return await action();
  } catch (error) {
    // Log lines come through a queue of their own: let those sent before the failure arrive.
    await new Promise((resolve) => setImmediate(resolve));
    // The first line is the cause; the ones after it say that loading failed. Without the
    // function names that llama.cpp puts in front ("llama_model_load: ").
    const reason = lines.find((line) => line !== '')?.replace(/^(?:[a-z0-9_]+: )+/, '');
    throw reason === undefined ? error : new Error(reason, { cause: error });
  } finally {
    errorListeners.delete(listener);
  }
}
