/**
 * One llama.cpp runtime per process and GPU choice, shared by every model that uses it:
 * loading the native binding is slow, and two copies would compete for the same cores.
 */
import { getLlama, type Llama } from 'node-llama-cpp';
import type { LlamaCppBackendConfig } from './llama-cpp-config.js';

const runtimes = new Map<string, Promise<Llama>>();

export function llamaRuntime(gpu: LlamaCppBackendConfig['gpu']): Promise<Llama> {
  let runtime = runtimes.get(gpu);
  if (!runtime) {
    // build: 'never': the prebuilt binaries load offline; building from source needs the network.
    runtime = getLlama({
      gpu: gpu === 'none' ? false : gpu,
      build: 'never',
      progressLogs: false,
      logLevel: 'error' as never,
    });
    runtimes.set(gpu, runtime);
  }
  return runtime;
}
